package legacy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/hookrun"
)

// Options configure one Run.
type Options struct {
	// CharmDir is the unpacked charm: dispatch, hooks/<name>, ...
	CharmDir string
	// UnitDir is the unit's own directory, given to hooks as
	// $FIXPOINT_UNIT_DIR. The unit's own copy of the charm is kept in
	// it (UnitDir/charm): hooks run there, with it as CHARM_DIR, so that
	// units of one service on one machine never share files the charm
	// writes. Without a UnitDir hooks run in CharmDir itself.
	UnitDir string
	// ToolsBinary is the executable the hook tools are symlinks to:
	// fixpoint-hook, or a fixpoint binary, which is every tool too;
	// default ToolsProgram's choice.
	ToolsBinary string
	// HookShell is what runs POSIX sh hooks: HookShellBuiltin (the
	// default, "") or HookShellSystem.
	HookShell string
	// ShellBinary is fixpoint-sh, which runs POSIX sh hooks under
	// HookShellBuiltin; default ShellProgram's choice, and when that is
	// "" every hook runs as its own executable.
	ShellBinary string
	// Timeout bounds each hook, as the operator's --hook-timeout says
	// ("how long one hook run may take"); default hookrun.DefaultTimeout. It does
	// not bound the whole call: the number of hooks in one call grows with
	// what changed (a unit that sees 50 new units join runs 100 hooks),
	// and a shared budget would fail such a call every time it is retried.
	// ctx bounds the call.
	Timeout time.Duration
	// MaxOutput caps each hook's logged output; more is dropped, never an
	// error. Default hookrun.DefaultMaxOutput.
	MaxOutput int
	// Env is added to hookrun.BaseEnv for every hook; nothing else of the
	// agent's environment reaches a hook.
	Env []string
	// Log receives hook output (debug), juju-log lines and skips.
	Log hclog.Logger
	// Track, if not nil, is told where each hook's processes are (a
	// *hookrun.UnitLock records them for an agent restarted after a crash).
	Track hookrun.Tracker

	// Model is JUJU_MODEL_NAME. ModelUUID is JUJU_MODEL_UUID; when empty
	// it is derived from Model (ModelUUID), as the default environment's
	// hooks have always seen it.
	Model     string
	ModelUUID string
	// AvailabilityZone is JUJU_AVAILABILITY_ZONE; empty where the machine
	// names none.
	AvailabilityZone string
	// PrincipalUnit is JUJU_PRINCIPAL_UNIT: the principal a subordinate
	// unit is attached to, empty for a principal.
	PrincipalUnit string
	// Status is the unit's current workload status, for status-get; the
	// universe does not carry it.
	Status *charmapi.Status
	// Ports are the unit's open ports ("80/tcp"), where open-port and
	// close-port start from; the universe does not carry them.
	Ports []string
	// Resources are the local paths of the unit's resource files by
	// name, which resource-get prints; the agent fetches them.
	Resources map[string]string
}

// Stats say what a Run did.
type Stats struct {
	// HooksRun counts hook executables run.
	HooksRun int
	// Hooks names them, in order.
	Hooks []string
	// Skipped names the events whose hook the charm does not have.
	Skipped []string
	// ToolCalls counts the hook tool calls the hooks made.
	ToolCalls int
}

// HookError is a hook that failed; it fails the whole Run.
type HookError struct {
	Hook       string
	Relation   string
	RemoteUnit string
	// Reason is "exit status 1", "killed by ...", "timed out ...".
	Reason string
	// Stderr is the tail of the hook's stderr.
	Stderr string
}

func (e *HookError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "hook %q", e.Hook)
	switch {
	case e.Relation != "" && e.RemoteUnit != "":
		fmt.Fprintf(&b, " (relation %s, remote unit %s)", e.Relation, e.RemoteUnit)
	case e.Relation != "":
		fmt.Fprintf(&b, " (relation %s)", e.Relation)
	}
	fmt.Fprintf(&b, " failed: %s", e.Reason)
	if e.Stderr != "" {
		fmt.Fprintf(&b, "; stderr: %s", e.Stderr)
	}
	return b.String()
}

// Run executes an old-hook charm's hooks for one reconcile: for each event
// in u.Events, in order, it runs CharmDir/hooks/<hook> if the charm has it
// (a missing hook is skipped, as in Juju) with Juju's environment and the
// hook tools served over a per-run authenticated unix socket. Tools read
// the universe as it was when the call began plus the unit's own writes.
//
// What the hooks wrote (relation-set, leader-set, status-set, open-port,
// close-port) becomes the returned Result, only if every hook exited 0: a
// failing hook fails the call with a *HookError naming the hook, its
// relation and remote unit, and nothing it or earlier hooks set is kept.
func Run(ctx context.Context, opts Options, u *charmapi.Universe) (*charmapi.Result, Stats, error) {
	var stats Stats
	if u == nil || u.Unit == "" {
		return nil, stats, errors.New("legacy hooks: no universe, or one without a unit")
	}
	if err := opts.fill(); err != nil {
		return nil, stats, err
	}
	log := opts.Log.With("unit", u.Unit)
	sess, err := newSession(u, opts.Status, opts.Ports, log)
	if err != nil {
		return nil, stats, fmt.Errorf("legacy hooks of %s: %w", u.Unit, err)
	}
	if len(u.Events) == 0 {
		return sess.result(), stats, nil
	}
	rc, err := prepare(opts, u, sess)
	if err != nil {
		return nil, stats, err
	}
	defer rc.close()
	srv, charmDir, env, token := rc.srv, rc.charmDir, rc.env, rc.token
	for i, ev := range u.Events {
		path, ok, err := hookPath(charmDir, ev.Hook)
		if err != nil {
			return nil, stats, err
		}
		sess.before(ev)
		if !ok {
			stats.Skipped = append(stats.Skipped, ev.Hook)
			log.Debug("charm has no such hook; skipped", "hook", ev.Hook)
			sess.after(ev)
			continue
		}
		contextID := fmt.Sprintf("%s-%s-%d-%s", u.Unit, ev.Hook, i, token[:8])
		sess.begin(contextID, ev)
		h := &hookRun{path: path, dir: charmDir, env: env.hookEnv(ev, contextID), maxOutput: opts.MaxOutput, track: opts.Track, shell: opts.ShellBinary, toolsDir: env.toolsDir}
		start := time.Now()
		hookCtx, cancel := context.WithTimeout(ctx, opts.Timeout)
		sess.killWith(cancel)
		out, runErr := h.run(hookCtx)
		sess.killWith(nil)
		cancel()
		sess.end()
		stats.HooksRun++
		stats.Hooks = append(stats.Hooks, ev.Hook)
		logOutput(log, ev, out, time.Since(start))
		if sess.rebootingNow() {
			// juju-reboot --now: the machine goes down with the hook, as
			// Juju's does; no later hook of this run runs.
			log.Info("juju-reboot --now: hook killed; the units on this machine restart", "hook", ev.Hook)
			stats.ToolCalls = int(srv.calls.Load())
			return sess.result(), stats, nil
		}
		if runErr != nil {
			herr := &HookError{Hook: ev.Hook, Relation: ev.Relation, RemoteUnit: ev.RemoteUnit, Reason: runErr.Error(), Stderr: out.stderr}
			switch {
			case ctx.Err() != nil:
				herr.Reason = "cancelled: " + ctx.Err().Error()
			case errors.Is(runErr, context.DeadlineExceeded):
				herr.Reason = fmt.Sprintf("timed out after %s", opts.Timeout)
			}
			stats.ToolCalls = int(srv.calls.Load())
			return nil, stats, herr
		}
		sess.after(ev)
	}
	stats.ToolCalls = int(srv.calls.Load())
	return sess.result(), stats, nil
}

// fill checks opts and fills in defaults.
func (o *Options) fill() error {
	if o.CharmDir == "" {
		return errors.New("legacy hooks: no charm directory")
	}
	dir, err := filepath.Abs(o.CharmDir)
	if err != nil {
		return fmt.Errorf("legacy hooks: charm directory: %w", err)
	}
	o.CharmDir = dir
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("legacy hooks: charm directory %s is not a directory", dir)
	}
	if o.UnitDir != "" {
		if o.UnitDir, err = filepath.Abs(o.UnitDir); err != nil {
			return fmt.Errorf("legacy hooks: unit directory: %w", err)
		}
	}
	if o.Log == nil {
		o.Log = hclog.NewNullLogger()
	}
	if o.ToolsBinary == "" {
		if o.ToolsBinary, err = ToolsProgram(o.Log); err != nil {
			return fmt.Errorf("legacy hooks: %w", err)
		}
	}
	if err := CheckHookShell(o.HookShell); err != nil {
		return fmt.Errorf("legacy hooks: %w", err)
	}
	switch {
	case o.HookShell == HookShellSystem:
		o.ShellBinary = ""
	case o.ShellBinary == "":
		o.ShellBinary = ShellProgram(o.Log)
	}
	if o.Timeout <= 0 {
		o.Timeout = hookrun.DefaultTimeout
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = hookrun.DefaultMaxOutput
	}
	return nil
}

// DispatchFile is the executable at a charm's root that Juju (2.8 and
// later) runs for every event instead of hooks/<event>, telling it the
// event in JUJU_DISPATCH_PATH; charmcraft packs every ops charm that way.
const DispatchFile = "dispatch"

// hookPath is what runs for hook: the charm's dispatch where it has one,
// else hooks/<hook>; ok is false when the charm has neither, and the
// event is skipped, as in Juju (worker/uniter/runner's discoverHookScript
// also looks for dispatch first).
func hookPath(charmDir, hook string) (string, bool, error) {
	if hook == "" || strings.ContainsAny(hook, `/\`) || hook == "." || hook == ".." {
		return "", false, fmt.Errorf("legacy hooks: event names no valid hook: %q", hook)
	}
	if path, ok, err := executable(filepath.Join(charmDir, DispatchFile), hook); ok || err != nil {
		return path, ok, err
	}
	return executable(filepath.Join(charmDir, "hooks", hook), hook)
}

// executable checks that path is a file that can run; ok is false when
// nothing is there.
func executable(path, hook string) (string, bool, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("hook %q: %w", hook, err)
	case fi.IsDir():
		return "", false, fmt.Errorf("hook %q: %s is a directory", hook, path)
	case fi.Mode()&0o111 == 0:
		// Juju fails a hook that is there but cannot run, rather than
		// skipping it silently.
		return "", false, &HookError{Hook: hook, Reason: fmt.Sprintf("%s is not executable", path)}
	}
	return path, true, nil
}

// maxSocketPath keeps a unix socket path within sun_path (108 bytes on
// Linux, 104 on the BSDs).
const maxSocketPath = 100

// socketPath is where the run's socket goes: in its private directory,
// unless $TMPDIR is so deep that the path would not fit; then in a private
// directory of its own under /tmp, removed with the socket.
func socketPath(runDir string) (string, error) {
	if p := filepath.Join(runDir, "tools.sock"); len(p) <= maxSocketPath {
		return p, nil
	}
	dir, err := os.MkdirTemp("/tmp", "fixpoint-hook-")
	if err != nil {
		return "", fmt.Errorf("hook tool socket: %w", err)
	}
	return filepath.Join(dir, "s"), nil
}

// linkTools makes dir hold one symlink per hook tool to binary.
func linkTools(dir, binary string) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("hook tools: %w", err)
	}
	for _, name := range ToolNames() {
		if err := os.Symlink(binary, filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("hook tools: %w", err)
		}
	}
	return nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// logOutput puts a hook's output in the agent's log, line by line.
func logOutput(log hclog.Logger, ev charmapi.Event, out *hookOutcome, took time.Duration) {
	log.Debug("ran hook", "hook", ev.Hook, "relation", ev.Relation, "remote_unit", ev.RemoteUnit, "took", took)
	if out == nil {
		return
	}
	for _, line := range strings.Split(strings.TrimRight(out.output, "\n"), "\n") {
		if line != "" {
			log.Debug(line, "hook", ev.Hook)
		}
	}
	if out.truncated {
		log.Debug("hook output truncated", "hook", ev.Hook)
	}
}

// runContext is what the processes of one Run (or RunAction) share: the
// tool server and its socket, the unit's charm directory and the
// environment; close removes it all.
type runContext struct {
	srv      *server
	charmDir string
	env      *runEnv
	token    string
	cleanup  []func()
}

// prepare makes the run context of sess: the tools' links and socket, the
// server answering them, the unit's copy of the charm.
func prepare(opts Options, u *charmapi.Universe, sess *session) (*runContext, error) {
	runDir, err := os.MkdirTemp("", "fixpoint-hook-")
	if err != nil {
		return nil, fmt.Errorf("legacy hooks of %s: %w", u.Unit, err)
	}
	rc := &runContext{}
	sess.in.charmDir = opts.CharmDir
	rc.cleanup = append(rc.cleanup, func() { os.RemoveAll(runDir) })
	toolsDir := filepath.Join(runDir, "bin")
	if err := linkTools(toolsDir, opts.ToolsBinary); err != nil {
		rc.close()
		return nil, fmt.Errorf("legacy hooks of %s: %w", u.Unit, err)
	}
	token, err := randomHex(32)
	if err != nil {
		rc.close()
		return nil, fmt.Errorf("legacy hooks of %s: token: %w", u.Unit, err)
	}
	socket, err := socketPath(runDir)
	if err != nil {
		rc.close()
		return nil, fmt.Errorf("legacy hooks of %s: %w", u.Unit, err)
	}
	// Its directory: the run's own, or the one made under /tmp for it.
	rc.cleanup = append(rc.cleanup, func() { os.RemoveAll(filepath.Dir(socket)) })
	srv, err := listen(socket, token, sess)
	if err != nil {
		rc.close()
		return nil, fmt.Errorf("legacy hooks of %s: %w", u.Unit, err)
	}
	rc.cleanup = append(rc.cleanup, srv.close)

	charmDir := opts.CharmDir
	if opts.UnitDir != "" {
		if charmDir, err = deployCharm(opts.CharmDir, u.Charm, opts.UnitDir); err != nil {
			rc.close()
			return nil, fmt.Errorf("legacy hooks of %s: %w", u.Unit, err)
		}
	}
	sess.in.modelUUID = opts.ModelUUID
	if sess.in.modelUUID == "" {
		sess.in.modelUUID = ModelUUID(opts.Model)
	}
	sess.in.resources = opts.Resources
	rc.srv, rc.charmDir, rc.token = srv, charmDir, token
	rc.env = &runEnv{
		base:     append(hookrun.BaseEnv(), opts.Env...),
		unit:     u.Unit,
		machine:  machineID(u),
		model:    opts.Model,
		uuid:     sess.in.modelUUID,
		zone:     opts.AvailabilityZone,
		princ:    opts.PrincipalUnit,
		charmDir: charmDir,
		unitDir:  opts.UnitDir,
		toolsDir: toolsDir,
		socket:   socket,
		token:    token,
		storage:  u.Storage,
	}
	return rc, nil
}

// machineID is JUJU_MACHINE_ID: the machine's Juju id, or its name for a
// machine registered before machines had ids, until its agent registers
// again.
func machineID(u *charmapi.Universe) string {
	if u.MachineID != "" {
		return u.MachineID
	}
	return u.Machine
}

// close removes what prepare made, last first.
func (rc *runContext) close() {
	for i := len(rc.cleanup) - 1; i >= 0; i-- {
		rc.cleanup[i]()
	}
}
