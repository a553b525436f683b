package legacy

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
	"github.com/hashicorp/go-hclog"
)

// The action tools, as Juju's (worker/uniter/runner/jujuc action-*.go):
// they work only while an action runs (RunAction); in a hook they fail as
// Juju's do, "not running an action".

// actionContext is the running action as its tools see it; the action
// tools are its methods.
type actionContext struct {
	logger  hclog.Logger // where action-log's lines also go
	params  map[string]any
	results map[string]any
	log     []ActionLogLine
	failed  bool
	message string
	// size is results' encoded size so far, kept under
	// model.MaxActionBytes.
	size int
}

// ActionLogLine is one action-log line.
type ActionLogLine struct {
	Time    time.Time
	Message string
}

// reservedResults are the result keys Juju keeps for the action's own
// output; action-set refuses them.
var reservedResults = map[string]bool{"stdout": true, "stdout-encoding": true, "stderr": true, "stderr-encoding": true}

// errNoAction is what the action tools say outside an action.
var errNoAction = fmt.Errorf("not running an action")

func init() {
	for name, t := range map[string]tool{
		"action-get":  {flags: []flagDef{formatFlag}, run: actionTool((*actionContext).get), keep: keepHook},
		"action-set":  {run: actionTool((*actionContext).set), write: true},
		"action-log":  {run: actionTool((*actionContext).logLine), write: true},
		"action-fail": {run: actionTool((*actionContext).fail), write: true},
	} {
		tools[name] = t
	}
}

// newActionContext starts an action with params and no results.
func newActionContext(params map[string]any, logger hclog.Logger) *actionContext {
	return &actionContext{logger: logger, params: params, results: map[string]any{}}
}

// actionTool runs an action tool on the running action; in a hook, where
// no action runs, it fails as Juju's do.
func actionTool(run func(a *actionContext, c *call) (any, error)) func(s *session, c *call) (any, error) {
	return func(s *session, c *call) (any, error) {
		if s.action == nil {
			return nil, errNoAction
		}
		return run(s.action, c)
	}
}

// get is `action-get [KEY[.KEY...]]`: every param, or the one at a
// dotted path (nothing when there is none).
func (a *actionContext) get(c *call) (any, error) {
	args := c.f.args
	if len(args) > 1 {
		return nil, usagef("unrecognized args: %q", args[1:])
	}
	if len(args) == 0 {
		if a.params == nil {
			return map[string]any{}, nil
		}
		return a.params, nil
	}
	var cur any = a.params
	for _, k := range strings.Split(args[0], ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, nil
		}
		if cur, ok = m[k]; !ok {
			return nil, nil
		}
	}
	return cur, nil
}

// ParseActionSet reads action-set's arguments, KEY[.KEY...]=VALUE each,
// into paths, checking every key part by Juju's rule and refusing the
// keys Juju reserves.
func ParseActionSet(args []string) ([][]string, error) {
	if len(args) == 0 {
		return nil, usagef("no key=value pairs given")
	}
	out := make([][]string, 0, len(args))
	for _, arg := range args {
		key, value, ok := strings.Cut(arg, "=")
		if !ok {
			return nil, usagef("argument %q must be of the form key...=value", arg)
		}
		parts := strings.Split(key, ".")
		for _, k := range parts {
			if !charmapi.ActionKey(k) {
				return nil, usagef("key %q must start and end with lowercase alphanumeric, and contain only lowercase alphanumeric, hyphens and periods", k)
			}
		}
		if reservedResults[parts[0]] {
			return nil, usagef("cannot set reserved action key %q", parts[0])
		}
		out = append(out, append(parts, value))
	}
	return out, nil
}

// set is `action-set KEY[.KEY...]=VALUE ...`: each value is set at
// its dotted path of the results, a value in the way replaced by a map.
func (a *actionContext) set(c *call) (any, error) {
	paths, err := ParseActionSet(c.f.args)
	if err != nil {
		return nil, err
	}
	results := cloneResults(a.results)
	for _, p := range paths {
		charmapi.SetPath(results, p[:len(p)-1], p[len(p)-1])
	}
	b, err := json.Marshal(results)
	if err != nil {
		return nil, err
	}
	if len(b) > model.MaxActionBytes {
		return nil, fmt.Errorf("results of %d bytes; the limit is %d", len(b), model.MaxActionBytes)
	}
	a.results, a.size = results, len(b)
	return noOutput{}, nil
}

// cloneResults copies results deeply: a refused action-set leaves them
// as they were.
func cloneResults(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = cloneResults(sub)
		}
		out[k] = v
	}
	return out
}

// logLine is `action-log MESSAGE...`: a line the operator sees as the
// action runs and after.
func (a *actionContext) logLine(c *call) (any, error) {
	if len(c.f.args) == 0 {
		return nil, usagef("no message specified")
	}
	if len(a.log) >= model.MaxActionLog {
		return nil, fmt.Errorf("the action logged %d lines already; the limit is %d", len(a.log), model.MaxActionLog)
	}
	msg := model.Truncate(strings.Join(c.f.args, " "), model.MaxActionLogLine)
	a.log = append(a.log, ActionLogLine{Time: time.Now().UTC(), Message: msg})
	a.logger.Info("action-log", "message", msg)
	return noOutput{}, nil
}

// fail is `action-fail [MESSAGE]`: the action ends failed, with
// MESSAGE or Juju's default.
func (a *actionContext) fail(c *call) (any, error) {
	if len(c.f.args) > 1 {
		return nil, usagef("unrecognized args: %q", c.f.args[1:])
	}
	a.failed = true
	a.message = "action failed without reason given, check action for errors"
	if len(c.f.args) == 1 {
		a.message = model.Truncate(c.f.args[0], model.MaxErrorBytes)
	}
	return noOutput{}, nil
}
