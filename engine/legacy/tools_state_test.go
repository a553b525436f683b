package legacy

import (
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// TestCharmStateTools is ops' state lifecycle (test_hookcmds'
// test-unit-state) and Juju's edges: set from a file and from arguments,
// read back one key and all, delete, and a result that replaces the
// unit's private state with the charm's keys under their prefix beside
// the adapter's own.
func TestCharmStateTools(t *testing.T) {
	u := testUniverse()
	u.State = map[string]string{model.StateAppVersion: "1.0", model.StateCharmPrefix + "old": "kept"}
	s := secretSession(t, u)
	call := func(tool string, file *string, args ...string) response {
		r := s.call(&request{Context: "ctx", Tool: tool, Args: args, File: file})
		r.Keep, r.Gen = 0, 0
		return r
	}
	file := `{"mykey": "hello world!", "empty": ""}`
	if r := call("state-set", &file, "--file", "-"); r.Code != 0 {
		t.Fatalf("state-set --file -: %+v", r)
	}
	runTool(t, s, "state-set", "n=1", "mykey=overridden by nothing")
	runTool(t, s, "state-set", "mykey=hello world!")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--format=json", "mykey"}, `"hello world!"` + "\n"},
		{[]string{"mykey"}, "hello world!\n"},
		{[]string{"--format=json", "missing"}, `""` + "\n"},
		{[]string{"--format=json"}, `{"empty":"","mykey":"hello world!","n":"1","old":"kept"}` + "\n"},
		{[]string{"-", "--format=json"}, `{"empty":"","mykey":"hello world!","n":"1","old":"kept"}` + "\n"},
	} {
		if got := runTool(t, s, "state-get", c.args...); got != c.want {
			t.Errorf("state-get %v = %q; want %q", c.args, got, c.want)
		}
	}
	if r := call("state-get", nil, "missing", "--strict"); r.Code != 1 || r.Stderr != "ERROR \"missing\" not found\n" {
		t.Errorf("state-get --strict of a missing key: %+v", r)
	}
	runTool(t, s, "state-delete", "mykey")
	runTool(t, s, "state-delete", "never-set")
	runTool(t, s, "state-delete")
	if got := runTool(t, s, "state-get", "--format=json"); got != `{"empty":"","n":"1","old":"kept"}`+"\n" {
		t.Errorf("after state-delete: %q", got)
	}
	res := s.result()
	want := map[string]string{model.StateAppVersion: "1.0", model.StateCharmPrefix + "old": "kept",
		model.StateCharmPrefix + "n": "1", model.StateCharmPrefix + "empty": ""}
	if len(res.State) != len(want) {
		t.Fatalf("result state = %v; want %v", res.State, want)
	}
	for k, v := range want {
		if got, ok := res.State[k]; !ok || got != v {
			t.Errorf("result state[%q] = %q, %v; want %q", k, got, ok, v)
		}
	}
	if k, err := model.CheckSettings(res.State); err != nil {
		t.Errorf("the model refuses the result's state at %q: %v", k, err)
	}
}

// TestCharmStateBounds: Juju's per-entry quota and the unit's bound fail
// the tool, and change nothing.
func TestCharmStateBounds(t *testing.T) {
	u := testUniverse()
	s := secretSession(t, u)
	big := strings.Repeat("v", 40<<10)
	runTool(t, s, "state-set", "a="+big)
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{strings.Repeat("k", maxCharmStateKey+1) + "=v"}, "max allowed key length (245) exceeded"},
		{[]string{"b=" + strings.Repeat("v", maxCharmStateValue+1)}, "max allowed value length (65536) exceeded"},
		{[]string{"b=" + big}, "max allowed charm state size (65536 bytes"},
		{[]string{"novalue"}, `expected "key=value"`},
	} {
		r := s.call(&request{Context: "ctx", Tool: "state-set", Args: c.args})
		if r.Code == 0 || !strings.Contains(r.Stderr, c.stderr) {
			t.Errorf("state-set %.40q: exit %d %q; want a failure saying %q", c.args, r.Code, r.Stderr, c.stderr)
		}
	}
	res := s.result()
	if len(res.State) != 1 || res.State[model.StateCharmPrefix+"a"] != big {
		t.Errorf("refused writes changed the state: %d keys", len(res.State))
	}
}

// TestCharmStateCommitsOnlyWithTheHook runs state-set in hooks: a run
// whose hooks succeed carries the state in its result; one whose later
// hook fails carries nothing, as Juju commits state with the hook.
func TestCharmStateCommitsOnlyWithTheHook(t *testing.T) {
	forEachShell(t, func(t *testing.T, shell func(*Options)) {
		charm := writeCharm(t, map[string]string{
			"install":        `printf '{"stored": "from a file"}' | state-set --file -`,
			"config-changed": `state-set n=2; state-get --format=json > "$FIXPOINT_UNIT_DIR/state.json"; [ "$FAIL" != yes ]`,
		})
		u := testUniverse()
		u.Events = []charmapi.Event{ev("install", "", "", "", ""), ev("config-changed", "", "", "", "")}
		res, _, unitDir, err := runHooks(t, charm, u, shell)
		if err != nil {
			t.Fatal(err)
		}
		if got := readUnitFile(t, unitDir, "state.json"); got != `{"n":"2","stored":"from a file"}`+"\n" {
			t.Errorf("state-get in the second hook = %q", got)
		}
		if res.State[model.StateCharmPrefix+"stored"] != "from a file" || res.State[model.StateCharmPrefix+"n"] != "2" {
			t.Errorf("result state = %v", res.State)
		}
		res, _, _, err = runHooks(t, charm, u, shell, func(o *Options) { o.Env = append(o.Env, "FAIL=yes") })
		if err == nil || res != nil {
			t.Errorf("a failing hook's run: result %+v, error %v; want no result and the hook's error", res, err)
		}
	})
}

// TestHookcmdsUnitState is test_hookcmds.py's test_state_roundtrip and
// test_state_special_chars: canonical/operator's own charm, its
// test-unit-state action, through ops.hookcmds.
func TestHookcmdsUnitState(t *testing.T) {
	charm := conformanceCharm(t, "test_hookcmds")
	for _, kv := range [][2]string{{"testkey", "testvalue"}, {"mykey", "hello world!"}} {
		out := runHookcmdsAction(t, charm, hookcmdsUniverse(), "test-unit-state", map[string]any{"key": kv[0], "value": kv[1]})
		if out.Results["retrieved"] != kv[1] {
			t.Errorf("retrieved = %v; want %q", out.Results["retrieved"], kv[1])
		}
		var all, after map[string]string
		jsonResult(t, out, "all-state", &all)
		jsonResult(t, out, "after-delete", &after)
		if all[kv[0]] != kv[1] {
			t.Errorf("all-state = %v; want %s=%q", all, kv[0], kv[1])
		}
		if _, still := after[kv[0]]; still {
			t.Errorf("after-delete = %v; want %s gone", after, kv[0])
		}
	}
}
