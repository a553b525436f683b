package charmapi

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Actions: a reconcile charm declares its actions in charm.cue (actions:
// NAME: {description, params, required}) and handles them beside its
// reconcile function (MainWithActions). The engine runs the charm's
// hooks/reconcile for an action with $FIXPOINT_ACTION set to its name,
// $FIXPOINT_ACTION_ID to the operation and $FIXPOINT_ACTION_PARAMS to
// its params as JSON (checked against the declaration, defaults filled
// in); the universe comes as for reconcile. The handler may write what a
// reconcile may (its Result); what it sets, logs and fails with is
// printed with that as one ActionOutput.

// ActionFunc handles one action on the unit's universe. An error fails
// the action with its message, and nothing it wrote is kept.
type ActionFunc func(u *Universe, a *Action) (*Result, error)

// Action is the running action: its params, and what the handler sets
// (Set), logs (Log) and fails with (Fail).
type Action struct {
	Name   string
	ID     string
	Params map[string]any
	out    ActionOutput
}

// ActionOutput is what an action's run prints on stdout.
type ActionOutput struct {
	Result  *Result        `json:"result,omitempty"`
	Results map[string]any `json:"results,omitempty"`
	Log     []ActionLog    `json:"log,omitempty"`
	Failed  bool           `json:"failed,omitempty"`
	Message string         `json:"message,omitempty"`
}

// ActionLog is one logged line.
type ActionLog struct {
	Time    int64  `json:"time"`
	Message string `json:"message"`
}

// Set sets a result at a dotted key ("backup.size"), as action-set does:
// each part lower-case letters, digits and dashes.
func (a *Action) Set(key string, value any) error {
	m := a.out.Results
	if m == nil {
		m = map[string]any{}
		a.out.Results = m
	}
	parts := strings.Split(key, ".")
	for _, p := range parts {
		if !ActionKey(p) {
			return fmt.Errorf("action result key %q: each dotted part starts and ends with a lower-case letter or digit and holds only those and dashes", key)
		}
	}
	SetPath(m, parts, value)
	return nil
}

// SetPath sets value at path in m, making the maps on the way and
// replacing a value in the way by a map, as action-set nests a dotted
// key. path is not empty.
func SetPath(m map[string]any, path []string, value any) {
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = value
}

// ActionKey says whether p may be one dotted part of an action result
// key, by Juju's rule: lower-case letters, digits and dashes, starting
// and ending with a letter or digit.
func ActionKey(p string) bool {
	if p == "" || p[0] == '-' || p[len(p)-1] == '-' {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Log records a line the operator sees with the action's outcome.
func (a *Action) Log(format string, args ...any) {
	a.out.Log = append(a.out.Log, ActionLog{Time: time.Now().UnixNano(), Message: fmt.Sprintf(format, args...)})
}

// Fail makes the action end failed with message; what the handler
// returns is still kept, as action-fail keeps a hook's writes.
func (a *Action) Fail(format string, args ...any) {
	a.out.Failed, a.out.Message = true, fmt.Sprintf(format, args...)
}

// Output is what the action came to so far.
func (a *Action) Output() ActionOutput { return a.out }

// RunAction runs fn as action name on u with params: what charmtest and
// the simulator call, and MainWithActions underneath.
func RunAction(fn ActionFunc, u *Universe, name, id string, params map[string]any) ActionOutput {
	a := &Action{Name: name, ID: id, Params: params}
	res, err := fn(u, a)
	out := a.out
	if err != nil {
		out.Failed, out.Message, out.Result = true, err.Error(), nil
		return out
	}
	if res == nil {
		res = &Result{}
	}
	out.Result = res
	return out
}

// MainWithActions is Main for a charm with actions: with $FIXPOINT_ACTION
// set it runs that action's handler and prints its ActionOutput; else it
// reconciles.
func MainWithActions(fn func(*Universe) (*Result, error), actions map[string]ActionFunc) {
	name := os.Getenv("FIXPOINT_ACTION")
	if name == "" {
		Main(fn)
		return
	}
	if err := runAction(actions, name, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func runAction(actions map[string]ActionFunc, name string, stdin io.Reader, stdout io.Writer) error {
	fn := actions[name]
	if fn == nil {
		return fmt.Errorf("this charm has no handler for action %q", name)
	}
	u, err := readUniverse(stdin)
	if err != nil {
		return err
	}
	var params map[string]any
	if p := os.Getenv("FIXPOINT_ACTION_PARAMS"); p != "" {
		if err := json.Unmarshal([]byte(p), &params); err != nil {
			return fmt.Errorf("decode $FIXPOINT_ACTION_PARAMS: %w", err)
		}
	}
	out := RunAction(fn, u, name, os.Getenv("FIXPOINT_ACTION_ID"), params)
	return json.NewEncoder(stdout).Encode(out)
}
