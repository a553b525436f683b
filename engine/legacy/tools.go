package legacy

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/legacy/hooktool"
)

// tool is one hook tool: its options and what it does. run is called with
// the session locked.
type tool struct {
	flags []flagDef
	// acceptAll takes any arguments as positional, for the tools that
	// only say they are unsupported.
	acceptAll bool
	run       func(s *session, c *call) (any, error)
	// keep is how long a caller may keep the tool's answer
	// (hooktool.KeepNot for a write); run may lower it for one call.
	keep int
	// write says the tool may change what the hook reads back: every
	// call moves the session's write generation (Response.Gen).
	write bool
}

// call is one tool invocation in a hook context.
type call struct {
	ctx  *hookContext
	f    *flags
	file *string
	keep int // for Response.Keep: the tool's, or what run made it
}

// How long fixpoint-sh may keep an answer (hooktool.Response.Keep).
const (
	keepNot   = hooktool.KeepNot
	keepWrite = hooktool.KeepUntilWrite
	keepHook  = hooktool.KeepForHook
)

// noOutput is what a tool that prints nothing returns.
type noOutput struct{}

// tools are the Juju hook tools the adapter serves.
var tools = map[string]tool{
	"relation-get":            {flags: []flagDef{relationFlag, appFlag, formatFlag}, run: relationGet, keep: keepHook},
	"relation-set":            {flags: []flagDef{relationFlag, appFlag, {name: "file"}, formatFlag}, run: relationSet, write: true},
	"relation-ids":            {flags: []flagDef{formatFlag}, run: relationIDs, keep: keepHook},
	"relation-list":           {flags: []flagDef{relationFlag, appFlag, formatFlag}, run: relationList, keep: keepHook},
	"config-get":              {flags: []flagDef{{name: "all", aliases: []string{"a"}, isBool: true}, formatFlag}, run: inputsTool((*inputs).configGet), keep: keepHook},
	"unit-get":                {flags: []flagDef{formatFlag}, run: inputsTool((*inputs).unitGet), keep: keepHook},
	"is-leader":               {flags: []flagDef{formatFlag}, run: inputsTool((*inputs).isLeader), keep: keepHook},
	"leader-get":              {flags: []flagDef{formatFlag}, run: writesOverInputsTool((*hookWrites).leaderGet), keep: keepWrite},
	"leader-set":              {run: writesOverInputsTool((*hookWrites).leaderSet), write: true},
	"status-set":              {flags: []flagDef{{name: "application", isBool: true}}, run: writesOverInputsTool((*hookWrites).statusSet), write: true},
	"application-version-set": {run: writesTool((*hookWrites).applicationVersionSet), write: true},
	"network-get":             {flags: networkGetFlags, run: inputsTool((*inputs).networkGet), keep: keepHook},
	"goal-state":              {flags: []flagDef{formatFlag}, run: inputsTool((*inputs).goalState), keep: keepHook},
	"relation-model-get":      {flags: []flagDef{relationFlag, formatFlag}, run: inputsTool((*inputs).relationModelGet), keep: keepHook},
	"status-get":              {flags: []flagDef{{name: "include-data", isBool: true}, {name: "application", isBool: true}, formatFlag}, run: writesOverInputsTool((*hookWrites).statusGet), keep: keepWrite},
	"juju-log":                {flags: []flagDef{{name: "debug", isBool: true}, {name: "log-level", aliases: []string{"l"}}, formatFlag}, run: jujuLog},
	"open-port":               {flags: []flagDef{endpointsFlag}, run: writesTool((*hookWrites).openPort), write: true},
	"close-port":              {flags: []flagDef{endpointsFlag}, run: writesTool((*hookWrites).closePort), write: true},
	"opened-ports":            {flags: []flagDef{{name: "endpoints", isBool: true}, formatFlag}, run: writesTool((*hookWrites).openedPorts), keep: keepWrite},
	"credential-get":          {flags: []flagDef{formatFlag}, run: inputsTool((*inputs).credentialGet), keep: keepNot},
	"juju-reboot":             {flags: []flagDef{{name: "now", isBool: true}}, run: jujuReboot, write: true},
	"state-get":               {flags: stateGetFlags, run: writesTool((*hookWrites).stateGet), keep: keepWrite},
	"state-set":               {flags: []flagDef{{name: "file"}}, run: writesTool((*hookWrites).stateSet), write: true},
	"state-delete":            {run: writesTool((*hookWrites).stateDelete), write: true},
}

func init() {
	for name := range unsupported {
		tools[name] = unsupportedTool(name)
	}
}

// IsTool reports whether name is a hook tool the fixpoint binary serves
// when invoked under that name.
func IsTool(name string) bool {
	_, ok := tools[name]
	return ok
}

// ToolNames lists the hook tools, sorted.
func ToolNames() []string {
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// call runs one tool request against the session. Every answer carries
// the session's write generation as it stands after the call.
func (s *session) call(req *request) response {
	s.mu.Lock()
	defer s.mu.Unlock()
	resp := s.run(req)
	resp.Gen = s.gen
	return resp
}

// run runs one tool request; s.mu is held.
func (s *session) run(req *request) response {
	if s.cur == nil || req.Context != s.cur.id {
		return failure(exitFailed, fmt.Errorf("hook context %q is not running: hook tools work only while the hook that started them runs", req.Context))
	}
	t, ok := tools[req.Tool]
	if !ok {
		return failure(exitFailed, fmt.Errorf("unknown hook tool %q", req.Tool))
	}
	f, err := parseFlags(req.Args, t.flags)
	if t.acceptAll {
		f, err = &flags{values: map[string]string{}, args: req.Args}, nil
	}
	if err == nil && hasFlag(t.flags, "format") {
		err = checkFormat(f)
	}
	if err != nil {
		return failure(exitUsage, err)
	}
	c := &call{ctx: s.cur, f: f, file: req.File, keep: t.keep}
	out, err := t.run(s, c)
	if t.write {
		// Moved whether or not the write took: a caller only ever
		// asks again for nothing.
		s.gen++
	}
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			return failure(exitUsage, err)
		}
		return failure(exitFailed, err)
	}
	if strings.HasPrefix(req.Tool, "secret-") {
		// Their arguments may be secret values (secret-add key=value).
		s.log.Trace("hook tool", "hook", s.cur.event.Hook, "tool", req.Tool, "args", len(req.Args))
	} else {
		s.log.Trace("hook tool", "hook", s.cur.event.Hook, "tool", req.Tool, "args", req.Args)
	}
	if _, silent := out.(noOutput); silent {
		return response{Keep: c.keep}
	}
	if raw, ok := out.(rawText); ok {
		return response{Stdout: string(raw), Keep: c.keep}
	}
	text, err := render(f, out)
	if err != nil {
		return failure(exitFailed, fmt.Errorf("format output: %w", err))
	}
	return response{Stdout: text, Keep: c.keep}
}

// failure is a tool error as Juju prints it: "ERROR <why>" on stderr.
func failure(code int, err error) response {
	return response{Code: code, Stderr: "ERROR " + err.Error() + "\n"}
}

func hasFlag(defs []flagDef, name string) bool {
	for _, d := range defs {
		if d.name == name {
			return true
		}
	}
	return false
}

// event is the running hook's event.
func (c *call) event() charmapi.Event { return c.ctx.event }
