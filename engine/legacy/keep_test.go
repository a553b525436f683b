package legacy

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/legacy/hooktool"
)

// TestKeptAnswersHold holds the tools to the Keep they answer with, which
// fixpoint-sh relies on when it keeps answers for a hook: an answer that
// may be kept came from a call that changed nothing and is the same when
// asked again; one kept for the whole hook is the same after every kind
// of write the hook could make; a write's answer is never kept.
func TestKeptAnswersHold(t *testing.T) {
	changed := ev("db-relation-changed", "db:3", "db/1", "db", "")
	cases := append(toolCases(),
		toolCase{name: "goal-state", e: changed, tool: "goal-state", args: []string{"--format=json"}},
		toolCase{name: "network-get", e: changed, tool: "network-get", args: []string{"db"}},
		toolCase{name: "relation-model-get", e: changed, tool: "relation-model-get"},
		toolCase{name: "own settings", e: changed, tool: "relation-get", args: []string{"-", "web/0"}},
		toolCase{name: "own service's settings", e: changed, tool: "relation-get", args: []string{"--app", "-", "web"}},
		toolCase{name: "relation-set", e: changed, tool: "relation-set", args: []string{"a=b"}})
	writes := [][]string{
		{"relation-set", "-r", "db:3", "host=elsewhere"},
		{"relation-set", "-r", "cluster:1", "peer=x"},
		{"relation-set", "-r", "db:3", "--app", "schema=v9"},
		{"relation-set", "-r", "cluster:1", "--app", "primary=web/0"},
		{"leader-set", "k=v"},
		{"status-set", "blocked", "moved"},
		{"status-set", "--application", "maintenance", "moved"},
		{"open-port", "99/tcp"},
		{"application-version-set", "9.9"},
	}
	leader := func(u *charmapi.Universe) *charmapi.Universe { u.Leader = true; return u }
	kept := map[string]bool{}
	for _, tt := range cases {
		u := tt.u
		if u == nil {
			u = testUniverse()
		}
		s, err := newSession(leader(u), &charmapi.Status{State: "active", Message: "up"}, []string{"80/tcp"}, hclog.NewNullLogger())
		if err != nil {
			t.Fatal(err)
		}
		s.begin("ctx", tt.e)
		before := s.result()
		req := &request{Context: "ctx", Tool: tt.tool, Args: tt.args}
		first := s.call(req)
		if first.Keep == hooktool.KeepNot {
			continue
		}
		kept[tt.tool] = true
		if first.Code != 0 {
			t.Errorf("%s: a failure may be kept: %+v", tt.name, first)
		}
		if after := s.result(); !reflect.DeepEqual(before, after) {
			t.Errorf("%s: %s %v changed the result: %+v, then %+v", tt.name, tt.tool, tt.args, before, after)
		}
		if again := s.call(req); again != first {
			t.Errorf("%s: %s %v answered %+v, then %+v", tt.name, tt.tool, tt.args, first, again)
		}
		if first.Keep != hooktool.KeepForHook {
			continue
		}
		for _, w := range writes {
			if r := s.call(&request{Context: "ctx", Tool: w[0], Args: w[1:]}); r.Code != 0 || r.Keep != hooktool.KeepNot {
				t.Fatalf("%v: %+v", w, r)
			}
			// The write generation moves; the answer does not.
			if again := s.call(req); again.Gen <= first.Gen || withGen(again, first.Gen) != first {
				t.Errorf("%s: kept for the hook, but after %v %s %v answered %+v, then %+v", tt.name, w, tt.tool, tt.args, first, again)
			}
		}
	}
	for _, name := range []string{"relation-get", "relation-list", "relation-ids", "config-get", "unit-get", "is-leader",
		"leader-get", "status-get", "opened-ports", "network-get", "goal-state", "relation-model-get"} {
		if !kept[name] {
			t.Errorf("%s's answers are never kept", name)
		}
	}
}

// withGen is r answered at write generation gen.
func withGen(r response, gen uint64) response {
	r.Gen = gen
	return r
}

// TestHookKeepsReadsUntilAWrite: in fixpoint-sh a read asked again is
// answered from what the hook kept; a write forgets the answers it may
// have changed, so a read of the unit's own settings after relation-set
// sees the write; under the system shell every call reaches the run. What
// the hook reads is the same under both.
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
	// system: 5 + 1 + 1 + 1 + 1; builtin: the remote unit's host once
	// (kept for the hook), the unit's own flavour once either side of
	// the write, and the write.
	want := map[string]int{t.Name() + "/" + HookShellSystem: 9, t.Name() + "/" + HookShellBuiltin: 4}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("tool calls reaching the run: %v; want %v", calls, want)
	}
}

// TestOtherProcessesWritesRetireKeptAnswers: a write made by another
// process of the hook (a shell the hook starts, or fixpoint-hook run as a
// command) is seen by fixpoint-sh's next read, as under the system shell.
// A command that writes nothing costs one read that confirms what was
// kept, not every kept answer.
func TestOtherProcessesWritesRetireKeptAnswers(t *testing.T) {
	const hook = `before=$(relation-get -r db:3 flavour "$JUJU_UNIT_NAME")
sh -c 'relation-set -r db:3 flavour=mint'
mint=$(relation-get -r db:3 flavour "$JUJU_UNIT_NAME")
env relation-set -r db:3 flavour=lime
lime=$(relation-get -r db:3 flavour "$JUJU_UNIT_NAME")
status=$(status-get)
env true
still=$(relation-get -r db:3 flavour "$JUJU_UNIT_NAME")
status2=$(status-get)
printf '%s|%s|%s|%s|%s\n' "$before" "$mint" "$lime" "$still" "$status2" > "$FIXPOINT_UNIT_DIR/out"
`
	calls := map[string]int{}
	forEachShell(t, func(t *testing.T, shell func(*Options)) {
		u := testUniverse()
		u.Events = []charmapi.Event{ev("install", "", "", "", "")}
		_, stats, unitDir, err := runHooks(t, writeCharm(t, map[string]string{"install": hook}), u, shell)
		if err != nil {
			t.Fatal(err)
		}
		// An install whose charm has set no status is Juju's
		// "maintenance: installing charm software".
		if got, want := strings.TrimSpace(readUnitFile(t, unitDir, "out")), "|mint|lime|lime|maintenance"; got != want {
			t.Errorf("hook read %q; want %q", got, want)
		}
		calls[t.Name()] = stats.ToolCalls
	})
	// system: every call; builtin: every call but the second status-get,
	// kept across a command that wrote nothing.
	want := map[string]int{t.Name() + "/" + HookShellSystem: 8, t.Name() + "/" + HookShellBuiltin: 7}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("tool calls reaching the run: %v; want %v", calls, want)
	}
}
