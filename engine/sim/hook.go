package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/charm"
	"github.com/fixpoint/fixpoint/engine/hookrun"
	"github.com/fixpoint/fixpoint/engine/legacy"
)

// ReconcileFunc is a Go reconcile hook, what charmapi.Main runs.
type ReconcileFunc = func(*charmapi.Universe) (*charmapi.Result, error)

// Hook is something that reconciles a unit: a Go function (Func), an
// executable (Exec), an old-hook charm (Legacy) or a packed charm (Charm,
// OpenCharm).
type Hook interface {
	// String names the hook in messages.
	String() string
	run(ctx context.Context, c *call) ([]byte, error)
}

// call is one hook run: the universe, as JSON and decoded, and where the
// unit lives.
type call struct {
	uni   *charmapi.Universe
	input []byte
	// dir is the unit's own directory, the hook's working directory.
	dir     string
	env     []string
	timeout time.Duration
	// What old hooks read through the hook tools beyond the universe.
	model, principal string
	status           *charmapi.Status
	ports            []string
	// resources are the paths of the unit's resource files by name,
	// which resource-get prints.
	resources map[string]string
}

func newCall(u *charmapi.Universe, dir string) (*call, error) {
	// Storage instances are directories in the unit's own, as an agent
	// makes them in its data dir.
	attached, err := engine.AttachStorage(filepath.Join(dir, "storage"), u)
	if err != nil {
		return nil, fmt.Errorf("storage of %s: %w", u.Unit, err)
	}
	u = attached
	input, err := json.Marshal(u)
	if err != nil {
		return nil, fmt.Errorf("encode the universe of %s: %w", u.Unit, err)
	}
	return &call{uni: u, input: input, dir: dir, timeout: time.Minute, env: []string{
		"FIXPOINT_UNIT=" + u.Unit,
		"FIXPOINT_SERVICE=" + u.Service,
		"FIXPOINT_MACHINE=" + u.Machine,
	}}, nil
}

// Func makes a Go reconcile function a Hook. It is called in-process on a
// copy of the universe decoded from JSON, as charmapi.Main would decode
// it; its result goes through JSON too. A panic is a hook error. The
// universe's File method resolves in the unit's own directory.
//
// The simulator calls it from several goroutines at once (one per
// schedule); a reconcile function that is a function of its universe is
// safe for that. Set SimOptions.Parallel to 1 otherwise.
func Func(fn ReconcileFunc) Hook { return funcHook{fn} }

type funcHook struct{ fn ReconcileFunc }

func (funcHook) String() string { return "reconcile function" }

func (h funcHook) run(_ context.Context, c *call) (out []byte, err error) {
	var u charmapi.Universe
	if err := json.Unmarshal(c.input, &u); err != nil {
		return nil, fmt.Errorf("decode universe: %w", err)
	}
	u.Dir = c.dir
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reconcile panicked: %v\n%s", r, debug.Stack())
		}
	}()
	res, err := h.fn(&u)
	if err != nil {
		return nil, fmt.Errorf("reconcile returned an error: %w", err)
	}
	if res == nil {
		res = &charmapi.Result{}
	}
	return json.Marshal(res)
}

// Exec makes a hook executable a Hook: it runs as a child process the way
// an agent runs it (engine/hookrun): the universe on stdin and in
// $FIXPOINT_UNIVERSE, the unit's own directory as working directory,
// FIXPOINT_UNIT and friends in the environment, a timeout that kills its
// whole process group.
func Exec(path string) Hook {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return execHook{path: path}
}

type execHook struct{ path, charmDir string }

func (h execHook) String() string { return h.path }

func (h execHook) run(ctx context.Context, c *call) ([]byte, error) {
	env := c.env
	if h.charmDir != "" {
		env = append(env[:len(env):len(env)], "FIXPOINT_CHARM_DIR="+h.charmDir)
	}
	out, err := hookrun.Run(ctx, hookrun.Spec{
		Path:     h.path,
		Dir:      c.dir,
		Input:    c.input,
		InputEnv: "FIXPOINT_UNIVERSE",
		Env:      env,
		Timeout:  c.timeout,
	})
	if err != nil {
		return nil, err
	}
	return out.Stdout, nil
}

// Legacy makes an old-hook charm (install, config-changed,
// <rel>-relation-joined, ... in hooks/) a Hook: the engine's adapter runs
// the hooks the universe's events call for, in order, with the Juju hook
// tools. Those tools are links to toolsBinary: fixpoint-hook or a fixpoint
// executable ("" means what legacy.ToolsProgram finds: fixpoint-hook
// beside the running binary, built with Go, or the running binary).
func Legacy(charmDir, toolsBinary string) Hook {
	if abs, err := filepath.Abs(charmDir); err == nil {
		charmDir = abs
	}
	return legacyHook{dir: charmDir, tools: toolsBinary}
}

type legacyHook struct{ dir, tools string }

func (h legacyHook) String() string { return "old hooks of " + h.dir }

func (h legacyHook) run(ctx context.Context, c *call) ([]byte, error) {
	env := append(c.env[:len(c.env):len(c.env)], "FIXPOINT_CHARM_DIR="+h.dir)
	res, _, err := legacy.Run(ctx, legacy.Options{
		CharmDir: h.dir, UnitDir: c.dir, ToolsBinary: h.tools, Timeout: c.timeout, Env: env,
		Model: c.model, PrincipalUnit: c.principal, Status: c.status, Ports: c.ports, Resources: c.resources,
	}, c.uni)
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// CacheDir is where the simulator keeps packed charms and Go hook builds:
// the same cache `fixpoint plan` and `apply` use, keyed by content, so a
// charm is built once across test runs.
func CacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "fixpoint", "charms")
	}
	return filepath.Join(os.TempDir(), "fixpoint-charms")
}

// OpenCharm packs the charm in dir as fixpoint packs it (building src/
// with go build), unpacks the archive into workDir/<hash> and returns its
// hook: hooks/reconcile run as a process, or the old hooks through the
// adapter (toolsBinary as in Legacy).
func OpenCharm(dir, workDir, toolsBinary string) (Hook, *charm.Packed, error) {
	p, err := charm.Pack(dir, CacheDir())
	if err != nil {
		return nil, nil, err
	}
	h, err := unpackedHook(p, workDir, toolsBinary)
	return h, p, err
}

// unpacked makes sure each archive is extracted once per directory.
var unpacked sync.Map // target dir → *sync.Once + error

type unpackOnce struct {
	once sync.Once
	err  error
}

func unpackedHook(p *charm.Packed, workDir, toolsBinary string) (Hook, error) {
	dir := filepath.Join(workDir, p.Hash)
	v, _ := unpacked.LoadOrStore(dir, &unpackOnce{})
	o := v.(*unpackOnce)
	o.once.Do(func() {
		if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
			return
		}
		_ = os.RemoveAll(dir)
		if err := charm.Unpack(p.Path, p.Hash, dir); err != nil {
			o.err = fmt.Errorf("unpack charm %s: %w", p.Meta.Name, err)
			return
		}
		o.err = os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644)
	})
	if o.err != nil {
		unpacked.Delete(dir)
		return nil, o.err
	}
	if p.Legacy {
		return legacyHook{dir: dir, tools: toolsBinary}, nil
	}
	return execHook{path: filepath.Join(dir, charm.ReconcileHook), charmDir: dir}, nil
}

// firstLine is s up to its first newline, for one-line summaries.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
