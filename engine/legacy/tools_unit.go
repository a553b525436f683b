package legacy

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// configGet is `config-get [KEY] [--all]`: one option, or every option
// that has a value (--all: null ones too). A missing key prints nothing,
// never an error, as in Juju.
func (in *inputs) configGet(c *call) (any, error) {
	args := c.f.args
	key := ""
	if len(args) > 0 {
		key, args = args[0], args[1:]
	}
	if err := checkEmpty(args); err != nil {
		return nil, err
	}
	if key != "" {
		if c.f.bool("all") {
			return nil, usagef("cannot use argument --all together with key %q", key)
		}
		return in.u.Config[key], nil
	}
	out := map[string]any{}
	for k, v := range in.u.Config {
		if v != nil || c.f.bool("all") {
			out[k] = v
		}
	}
	return out, nil
}

// unitGet is `unit-get private-address|public-address`. A unit has one
// address here, so both give it.
func (in *inputs) unitGet(c *call) (any, error) {
	args := c.f.args
	if len(args) == 0 {
		return nil, usagef("no setting specified")
	}
	if err := checkEmpty(args[1:]); err != nil {
		return nil, err
	}
	switch args[0] {
	case "private-address", "public-address":
		return in.address(), nil
	}
	return nil, usagef("unknown setting %q", args[0])
}

// address is the unit's address: the universe's, else the private-address
// the engine put in the unit's own relation settings.
func (in *inputs) address() string {
	if in.u.Address != "" {
		return in.u.Address
	}
	for _, r := range in.u.Relations {
		if a := r.Local["private-address"]; a != "" {
			return a
		}
	}
	return ""
}

// isLeader is `is-leader`: True or False.
func (in *inputs) isLeader(c *call) (any, error) {
	if err := checkEmpty(c.f.args); err != nil {
		return nil, err
	}
	return in.u.Leader, nil
}

// keyArg is the one optional KEY of leader-get and state-get: "" for
// none or "-" (every key); any more arguments are refused.
func keyArg(args []string) (string, error) {
	key := ""
	if len(args) > 0 {
		if key = args[0]; key == "-" {
			key = ""
		}
		args = args[1:]
	}
	return key, checkEmpty(args)
}

// leaderGet is `leader-get [KEY|-]`.
func (w *hookWrites) leaderGet(in *inputs, c *call) (any, error) {
	key, err := keyArg(c.f.args)
	if err != nil {
		return nil, err
	}
	data := w.currentLeaderData(in)
	if key != "" {
		if v, ok := data[key]; ok {
			return v, nil
		}
		return nil, nil
	}
	out := maps.Clone(data)
	if out == nil {
		out = map[string]string{}
	}
	return out, nil
}

// leaderSet is `leader-set K=V...`, leader only; an empty value deletes.
func (w *hookWrites) leaderSet(in *inputs, c *call) (any, error) {
	settings, err := parseKeyValues(c.f.args)
	if err != nil {
		return nil, err
	}
	if !in.u.Leader {
		return nil, fmt.Errorf("cannot write leadership settings: cannot write settings: not the leader")
	}
	w.leaderData = write(w.currentLeaderData(in), settings)
	return noOutput{}, nil
}

// workloadStates are the states a charm may set, in Juju's order.
var workloadStates = []string{"maintenance", "blocked", "waiting", "active"}

// statusSet is `status-set [--application] STATE [MSG]`.
func (w *hookWrites) statusSet(in *inputs, c *call) (any, error) {
	args := c.f.args
	if len(args) < 1 {
		return nil, usagef("invalid args, require <status> [message]")
	}
	valid := false
	for _, st := range workloadStates {
		valid = valid || args[0] == st
	}
	if !valid {
		return nil, usagef("invalid status %q, expected one of [%s]", args[0], strings.Join(workloadStates, " "))
	}
	st := &charmapi.Status{State: args[0]}
	if len(args) > 1 {
		st.Message = args[1]
		if err := checkEmpty(args[2:]); err != nil {
			return nil, err
		}
	}
	if c.f.bool("application") {
		if !in.u.Leader {
			return nil, fmt.Errorf("this unit is not the leader")
		}
		// The result has no application status: it is kept in the
		// unit's private state, where status-get --application reads
		// it back in this call and later ones.
		b, err := json.Marshal(st)
		if err != nil {
			return nil, err
		}
		w.appStatus = st
		w.setState(model.StateAppStatus, string(b))
		return noOutput{}, nil
	}
	w.status, w.statusWritten = st, true
	return noOutput{}, nil
}

// statusGet is `status-get [--include-data] [--application]`.
func (w *hookWrites) statusGet(in *inputs, c *call) (any, error) {
	if err := checkEmpty(c.f.args); err != nil {
		return nil, err
	}
	st := w.status
	if c.f.bool("application") {
		if !in.u.Leader {
			return nil, fmt.Errorf("finding application status: this unit is not the leader")
		}
		st = w.applicationStatus()
	}
	if st == nil {
		st = &charmapi.Status{State: "unknown"}
	}
	if !c.f.bool("include-data") && !c.f.bool("application") {
		return st.State, nil
	}
	m := map[string]any{"status": st.State, "message": st.Message, "status-data": map[string]any{}}
	if c.f.bool("application") {
		return map[string]any{"application-status": m}, nil
	}
	return m, nil
}

// jujuLog is `juju-log [--debug] [-l LEVEL] MSG...`: a line in the
// agent's log, attributed to the unit and hook.
func jujuLog(s *session, c *call) (any, error) {
	if len(c.f.args) == 0 {
		return nil, usagef("no message specified")
	}
	msg := strings.Join(c.f.args, " ")
	level := hclog.Info
	if c.f.bool("debug") {
		level = hclog.Debug
	}
	if c.f.has("log-level") {
		switch l := strings.ToUpper(c.f.str("log-level")); l {
		case "TRACE":
			level = hclog.Trace
		case "DEBUG":
			level = hclog.Debug
		case "INFO":
			level = hclog.Info
		case "WARN", "WARNING":
			level = hclog.Warn
		case "ERROR", "CRITICAL":
			level = hclog.Error
		default:
			// Juju logs at INFO after a warning, rather than failing the
			// hook over a log line.
			s.log.Warn("juju-log: unknown log level, using INFO", "level", c.f.str("log-level"))
		}
	}
	s.log.Log(level, msg, "unit", s.in.u.Unit, "hook", c.event().Hook)
	return noOutput{}, nil
}
