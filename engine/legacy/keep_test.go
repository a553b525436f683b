package legacy

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/legacy/hooktool"
)

// TestReadToolsChangeNothing holds the tools hooktool.IsRead names to
// what fixpoint-sh relies on when it keeps their answers for a hook: each
// is a tool this adapter serves, calling it changes nothing the hook's
// result or a later call could see, and calling it again answers the
// same.
func TestReadToolsChangeNothing(t *testing.T) {
	for _, name := range ToolNames() {
		if hooktool.IsRead(name) && unsupported[name] != "" {
			t.Errorf("%s is a read but not served", name)
		}
	}
	changed := ev("db-relation-changed", "db:3", "db/1", "db", "")
	cases := append(toolCases(),
		toolCase{name: "goal-state", e: changed, tool: "goal-state", args: []string{"--format=json"}},
		toolCase{name: "network-get", e: changed, tool: "network-get", args: []string{"db"}},
		toolCase{name: "relation-model-get", e: changed, tool: "relation-model-get"})
	tried := map[string]bool{}
	for _, tt := range cases {
		if !hooktool.IsRead(tt.tool) {
			continue
		}
		tried[tt.tool] = true
		u := tt.u
		if u == nil {
			u = testUniverse()
		}
		s, err := newSession(u, &charmapi.Status{State: "active", Message: "up"}, []string{"80/tcp"}, hclog.NewNullLogger())
		if err != nil {
			t.Fatal(err)
		}
		s.begin("ctx", tt.e)
		before := s.result()
		req := &request{Context: "ctx", Tool: tt.tool, Args: tt.args}
		first := s.call(req)
		if after := s.result(); !reflect.DeepEqual(before, after) {
			t.Errorf("%s: %s %v changed the result: %+v, then %+v", tt.name, tt.tool, tt.args, before, after)
		}
		if again := s.call(req); again != first {
			t.Errorf("%s: %s %v answered %+v, then %+v", tt.name, tt.tool, tt.args, first, again)
		}
	}
	for _, name := range ToolNames() {
		if hooktool.IsRead(name) && !tried[name] {
			t.Errorf("read %s has no case", name)
		}
	}
}

// TestHookKeepsReadsUntilAWrite: in fixpoint-sh a read asked again is
// answered from what the hook kept, and any other tool forgets it, so a
// read after relation-set sees the write; under the system shell every
// call reaches the run. What the hook reads is the same under both.
func TestHookKeepsReadsUntilAWrite(t *testing.T) {
	const hook = `for i in 1 2 3 4 5; do
	host=$(relation-get -r db:3 host db/0)
done
before=$(relation-get -r db:3 flavour "$JUJU_UNIT_NAME")
relation-set -r db:3 flavour=mint
after=$(relation-get -r db:3 flavour "$JUJU_UNIT_NAME")
again=$(relation-get -r db:3 host db/0)
printf '%s|%s|%s|%s\n' "$host" "$before" "$after" "$again" > "$FIXPOINT_UNIT_DIR/out"
`
	calls := map[string]int{}
	forEachShell(t, func(t *testing.T, shell func(*Options)) {
		u := testUniverse()
		u.Events = []charmapi.Event{ev("install", "", "", "", "")}
		_, stats, unitDir, err := runHooks(t, writeCharm(t, map[string]string{"install": hook}), u, shell)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.TrimSpace(readUnitFile(t, unitDir, "out")), "10.0.0.1||mint|10.0.0.1"; got != want {
			t.Errorf("hook read %q; want %q", got, want)
		}
		calls[t.Name()] = stats.ToolCalls
	})
	// system: 5 + 1 + 1 + 1 + 1; builtin: the host once before the
	// write and once after, the flavour once either side.
	want := map[string]int{t.Name() + "/" + HookShellSystem: 9, t.Name() + "/" + HookShellBuiltin: 5}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("tool calls reaching the run: %v; want %v", calls, want)
	}
}
