package legacy

import (
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// actionSession is a session running an action with params.
func actionSession(t *testing.T, params map[string]any) *session {
	t.Helper()
	s, err := newSession(testUniverse(), nil, nil, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	s.action = newActionContext(params, hclog.NewNullLogger())
	s.begin("ctx", charmapi.Event{Hook: "backup-action"})
	return s
}

func callTool(s *session, name string, args ...string) response {
	r := s.call(&request{Context: "ctx", Tool: name, Args: args})
	r.Keep, r.Gen = 0, 0
	return r
}

func TestActionTools(t *testing.T) {
	s := actionSession(t, map[string]any{"dest": "/srv", "level": 3.0, "opts": map[string]any{"fast": true}})
	for _, c := range []struct {
		tool   string
		args   []string
		stdout string
		code   int
		stderr string
	}{
		{tool: "action-get", stdout: "dest: /srv\nlevel: 3\nopts:\n    fast: true\n"},
		{tool: "action-get", args: []string{"dest"}, stdout: "/srv\n"},
		{tool: "action-get", args: []string{"opts.fast"}, stdout: "True\n"},
		{tool: "action-get", args: []string{"opts.fast", "--format", "json"}, stdout: "true\n"},
		{tool: "action-get", args: []string{"--format=json"}, stdout: `{"dest":"/srv","level":3,"opts":{"fast":true}}` + "\n"},
		{tool: "action-get", args: []string{"nope.deeper"}},
		{tool: "action-get", args: []string{"a", "b"}, code: exitUsage, stderr: "unrecognized args"},
		{tool: "action-set", args: []string{"outfile.size=10G", "foo.bar=2", "foo.baz.val=3"}},
		{tool: "action-set", args: []string{"foo.bar.zab=4", "foo.baz=1", "eq=a=b"}},
		{tool: "action-set", args: []string{"Bad=1"}, code: exitUsage, stderr: `key "Bad" must start and end with lowercase alphanumeric`},
		{tool: "action-set", args: []string{"a.-b=1"}, code: exitUsage, stderr: `key "-b"`},
		{tool: "action-set", args: []string{"novalue"}, code: exitUsage, stderr: "must be of the form key...=value"},
		{tool: "action-set", args: []string{"stdout=x"}, code: exitUsage, stderr: `cannot set reserved action key "stdout"`},
		{tool: "action-log", args: []string{"copying", "files"}},
		{tool: "action-log", code: exitUsage, stderr: "no message specified"},
		{tool: "action-fail", args: []string{"disk full"}},
	} {
		r := callTool(s, c.tool, c.args...)
		if r.Code != c.code || r.Stdout != c.stdout || !strings.Contains(r.Stderr, c.stderr) {
			t.Errorf("%s %q: code %d stdout %q stderr %q; want %d %q %q", c.tool, c.args, r.Code, r.Stdout, r.Stderr, c.code, c.stdout, c.stderr)
		}
	}
	// Juju's example: later sets replace what is in their way.
	want := map[string]any{"outfile": map[string]any{"size": "10G"}, "foo": map[string]any{"bar": map[string]any{"zab": "4"}, "baz": "1"}, "eq": "a=b"}
	if got := model.WholeNumbers(s.action.results); !equalJSON(got, want) {
		t.Errorf("results %v; want %v", got, want)
	}
	if len(s.action.log) != 1 || s.action.log[0].Message != "copying files" {
		t.Errorf("log %+v", s.action.log)
	}
	if !s.action.failed || s.action.message != "disk full" {
		t.Errorf("failed %v %q", s.action.failed, s.action.message)
	}
	// action-fail without a message: Juju's.
	callTool(s, "action-fail")
	if s.action.message != "action failed without reason given, check action for errors" {
		t.Errorf("default failure message %q", s.action.message)
	}
}

func TestActionToolsOutsideAnAction(t *testing.T) {
	for _, name := range []string{"action-get", "action-set", "action-log", "action-fail"} {
		r := callIn(t, testUniverse(), charmapi.Event{Hook: "install"}, name, "a=b")
		if r.Code == 0 || !strings.Contains(r.Stderr, "not running an action") {
			t.Errorf("%s in a hook: %d %q", name, r.Code, r.Stderr)
		}
	}
}

func equalJSON(a, b any) bool {
	return render2(a) == render2(b)
}

func render2(v any) string {
	s, _ := formatYAML(model.WholeNumbers(v))
	return s
}
