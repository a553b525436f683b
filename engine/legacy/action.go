package legacy

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// Action is one operation to run in a unit's hook context: a charm
// action with its params, or (Name model.ExecName) a shell command.
type Action struct {
	ID     int
	Name   string
	Params map[string]any
	Exec   string
}

// ActionOutcome is what an operation's run came to.
type ActionOutcome struct {
	// Failed says the action failed (action-fail, or the process did not
	// exit 0); Message says why.
	Failed  bool
	Message string
	// Results are what action-set set, with Juju's return-code, stdout
	// and stderr.
	Results map[string]any
	Log     []ActionLogLine
	// Writes is what the process wrote through the hook tools; nil when
	// it did not exit 0, when nothing it wrote is kept, as for a hook.
	Writes *charmapi.Result
}

// maxActionStream caps the stdout and stderr kept in an action's results.
const maxActionStream = 16 << 10

// RunAction runs act in u's hook context: the universe as the unit's
// hooks see it (no hook of u.Events runs), every hook tool, and the action
// tools. A charm action runs the charm's dispatch with
// JUJU_DISPATCH_PATH=actions/<name> where it has one, else
// actions/<name>; exec runs its command with /bin/sh -c. As Juju, it
// sets JUJU_ACTION_NAME and JUJU_ACTION_UUID. An error is an operation
// that could not run at all (no such action, no charm directory).
func RunAction(ctx context.Context, opts Options, u *charmapi.Universe, act Action) (*ActionOutcome, error) {
	if u == nil || u.Unit == "" {
		return nil, errors.New("legacy action: no universe, or one without a unit")
	}
	if err := opts.fill(); err != nil {
		return nil, err
	}
	log := opts.Log.With("unit", u.Unit, "operation", act.ID)
	sess, err := newSession(u, opts.Status, opts.Ports, log)
	if err != nil {
		return nil, fmt.Errorf("operation %d of %s: %w", act.ID, u.Unit, err)
	}
	sess.action = newActionContext(act.Params, log)
	rc, err := prepare(opts, u, sess)
	if err != nil {
		return nil, err
	}
	defer rc.close()
	h := &hookRun{dir: rc.charmDir, maxOutput: opts.MaxOutput, track: opts.Track, shell: opts.ShellBinary, toolsDir: rc.env.toolsDir}
	dispatchPath := "actions/" + act.Name
	if act.Name == model.ExecName {
		h.path, h.args = "/bin/sh", []string{"-c", act.Exec}
		dispatchPath = ""
	} else {
		if err := model.CheckActionName(act.Name); err != nil {
			return nil, err
		}
		path, ok, err := executable(filepath.Join(rc.charmDir, DispatchFile), act.Name)
		if err == nil && !ok {
			path, ok, err = executable(filepath.Join(rc.charmDir, "actions", act.Name), act.Name)
		}
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("the charm has neither %s nor actions/%s to run action %s", DispatchFile, act.Name, act.Name)
		}
		h.path = path
	}
	ev := charmapi.Event{Hook: act.Name + "-action"}
	contextID := fmt.Sprintf("%s-action-%d-%s", u.Unit, act.ID, rc.token[:8])
	h.env = rc.env.actionEnv(ev, contextID, dispatchPath, act)
	stdout, stderr := &cappedBuffer{max: maxActionStream}, &cappedBuffer{max: maxActionStream}
	h.stdout, h.stderr = stdout, stderr
	sess.begin(contextID, ev)
	start := time.Now()
	runCtx, cancel := context.WithTimeout(ctx, opts.Timeout)
	out, runErr := h.run(runCtx)
	cancel()
	sess.end()
	logOutput(log, ev, out, time.Since(start))

	// The hook context is closed: no tool call reads or writes these
	// any more.
	sess.mu.Lock()
	a := sess.action
	res := &ActionOutcome{Failed: a.failed, Message: a.message, Results: a.results, Log: a.log}
	sess.mu.Unlock()
	code := 0
	switch {
	case runErr == nil:
		res.Writes = sess.result()
	case ctx.Err() != nil:
		res.Failed, res.Message, code = true, "cancelled: "+ctx.Err().Error(), -1
	case errors.Is(runErr, context.DeadlineExceeded):
		res.Failed, res.Message, code = true, fmt.Sprintf("timed out after %s", opts.Timeout), -1
	default:
		code = out.code
		if act.Name != model.ExecName {
			res.Failed = true
			if res.Message == "" {
				res.Message = runErr.Error()
			}
		}
	}
	res.Results["return-code"] = float64(code)
	if s := stdout.String(); s != "" {
		res.Results["stdout"] = s
	}
	if s := stderr.String(); s != "" {
		res.Results["stderr"] = s
	}
	return res, nil
}

// actionEnv is a hook's environment for an action: Juju's
// JUJU_ACTION_NAME and JUJU_ACTION_UUID, JUJU_DISPATCH_PATH
// actions/<name> (none for exec), and no JUJU_HOOK_NAME.
func (r *runEnv) actionEnv(ev charmapi.Event, contextID, dispatchPath string, act Action) []string {
	env := r.hookEnv(ev, contextID)
	out := env[:0]
	for _, kv := range env {
		switch {
		case hasKey(kv, "JUJU_HOOK_NAME"), hasKey(kv, "JUJU_DISPATCH_PATH"):
			continue
		}
		out = append(out, kv)
	}
	if dispatchPath != "" {
		out = append(out, "JUJU_DISPATCH_PATH="+dispatchPath, "JUJU_ACTION_NAME="+act.Name)
	}
	return append(out, "JUJU_ACTION_UUID="+strconv.Itoa(act.ID))
}

func hasKey(kv, key string) bool {
	return len(kv) > len(key) && kv[len(key)] == '=' && kv[:len(key)] == key
}
