package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/hookrun"
	"github.com/fixpoint/fixpoint/engine/wire"
)

// ReconcileFunc is a Go reconcile hook, what charmapi.Main runs.
type ReconcileFunc = func(*charmapi.Universe) (*charmapi.Result, error)

// Hook is something that reconciles a unit: a Go function (Func), an
// executable (Exec), or a charm directory's own hook (package
// engine/sim/simdir: a packed charm, or an old-hook charm through the
// legacy adapter). Hooks outside this package implement it too.
type Hook interface {
	// String names the hook in messages.
	String() string
	// Run runs the hook once on c's universe and returns what it printed:
	// the result JSON.
	Run(ctx context.Context, c *Call) ([]byte, error)
}

// ActionHook is a Hook that also runs charm actions, as an agent runs
// them: in the unit's hook context on the universe it sees now.
type ActionHook interface {
	Hook
	// RunAction runs act in c's hook context and reports what it came
	// to as the agent does (the report's Unit is c's unit).
	RunAction(ctx context.Context, c *Call, act wire.Action) *wire.ActionReport
}

// Call is one hook run: the universe, decoded and as JSON, and where the
// unit lives. A hook must not change it.
type Call struct {
	Universe *charmapi.Universe
	// Input is Universe as JSON, what a hook process reads.
	Input []byte
	// Dir is the unit's own directory, the hook's working directory.
	Dir     string
	Env     []string
	Timeout time.Duration
	// What old hooks read through the hook tools beyond the universe.
	Model, Principal string
	Status           *charmapi.Status
	Ports            []string
	// Resources are the paths of the unit's resource files by name,
	// which resource-get prints.
	Resources map[string]string
}

func newCall(u *charmapi.Universe, dir string) (*Call, error) {
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
	return &Call{Universe: u, Input: input, Dir: dir, Timeout: time.Minute, Env: []string{
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

func (h funcHook) Run(_ context.Context, c *Call) (out []byte, err error) {
	var u charmapi.Universe
	if err := json.Unmarshal(c.Input, &u); err != nil {
		return nil, fmt.Errorf("decode universe: %w", err)
	}
	u.Dir = c.Dir
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
// whole process group. It runs no actions; a charm directory's hook
// (package simdir) does.
func Exec(path string) Hook {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return execHook{path: path}
}

type execHook struct{ path string }

func (h execHook) String() string { return h.path }

func (h execHook) Run(ctx context.Context, c *Call) ([]byte, error) {
	out, err := hookrun.Run(ctx, hookrun.Spec{
		Path:     h.path,
		Dir:      c.Dir,
		Input:    c.Input,
		InputEnv: "FIXPOINT_UNIVERSE",
		Env:      c.Env,
		Timeout:  c.Timeout,
	})
	if err != nil {
		return nil, err
	}
	return out.Stdout, nil
}

// firstLine is s up to its first newline, for one-line summaries.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
