package legacy

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/charmapi"
)

// callIn runs one tool request in a fresh session whose running hook is
// e, and returns what it prints and its exit code (how long it may be
// kept is TestKeptAnswersHold's).
func callIn(t *testing.T, u *charmapi.Universe, e charmapi.Event, tool string, args ...string) response {
	t.Helper()
	s, err := newSession(u, nil, nil, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	s.in.net = testNet
	s.begin("ctx", e)
	r := s.call(&request{Context: "ctx", Tool: tool, Args: args})
	// What the tool prints and its status: how long it may be kept is
	// TestKeptAnswersHold's.
	r.Keep, r.Gen = 0, 0
	return r
}

// toolCase is one hook tool call and what it must answer, through the
// session (TestToolOutputs) and through both hook shells
// (TestToolOutputsThroughBothShells).
type toolCase struct {
	name   string
	u      *charmapi.Universe
	e      charmapi.Event
	tool   string
	args   []string
	code   int
	stdout string
	stderr string
}

func toolCases() []toolCase {
	changed := ev("db-relation-changed", "db:3", "db/1", "db", "")
	install := ev("install", "", "", "", "")
	configChanged := ev("config-changed", "", "", "", "")
	leader := testUniverse()
	leader.Leader = true
	return []toolCase{
		{name: "config-get key smart", e: install, tool: "config-get", args: []string{"port"}, stdout: "8080\n"},
		{name: "config-get string", e: install, tool: "config-get", args: []string{"name"}, stdout: "shop\n"},
		{name: "config-get bool smart", e: install, tool: "config-get", args: []string{"debug"}, stdout: "True\n"},
		{name: "config-get bool json", e: install, tool: "config-get", args: []string{"debug", "--format", "json"}, stdout: "true\n"},
		{name: "config-get missing key prints nothing", e: install, tool: "config-get", args: []string{"nope"}},
		{name: "config-get missing key json", e: install, tool: "config-get", args: []string{"--format=json", "nope"}, stdout: "null\n"},
		{name: "config-get all set options", e: install, tool: "config-get", stdout: "debug: true\nname: shop\nport: 8080\nratio: 0.5\n"},
		{name: "config-get --all includes null", e: install, tool: "config-get", args: []string{"--all", "--format", "json"},
			stdout: `{"debug":true,"name":"shop","port":8080,"ratio":0.5,"unset":null}` + "\n"},
		{name: "config-get --all with a key", e: install, tool: "config-get", args: []string{"--all", "port"}, code: 2,
			stderr: "ERROR cannot use argument --all together with key \"port\"\n"},
		{name: "relation-get defaults to the hook's relation and unit", e: changed, tool: "relation-get", args: []string{"host"}, stdout: "10.0.0.2\n"},
		{name: "relation-get other unit yaml", e: changed, tool: "relation-get", args: []string{"--format", "yaml", "-", "db/0"},
			stdout: "host: 10.0.0.1\nport: \"6379\"\nprivate-address: 10.0.0.1\n"},
		{name: "relation-get --app remote", e: changed, tool: "relation-get", args: []string{"--app", "schema"}, stdout: "v2\n"},
		{name: "relation-get --app peer bag", e: install, tool: "relation-get", args: []string{"-r", "cluster:1", "--app", "-", "web"}, stdout: "primary: web/1\n"},
		{name: "relation-get --app unknown app", e: changed, tool: "relation-get", args: []string{"--app", "-", "nope"}, code: 1,
			stderr: "ERROR cannot read settings for application \"nope\" in relation \"db:3\": not in the relation\n"},
		{name: "relation-get too many args", e: changed, tool: "relation-get", args: []string{"a", "db/0", "extra"}, code: 2,
			stderr: "ERROR unrecognized args: [\"extra\"]\n"},
		{name: "relation-get in an app-bag change reads the remote app", e: ev("db-relation-changed", "db:3", "", "db", ""), tool: "relation-get",
			stdout: "schema: v2\n"},
		{name: "relation-get key in an app-bag change", e: ev("db-relation-changed", "db:3", "", "db", ""), tool: "relation-get", args: []string{"schema"},
			stdout: "v2\n"},
		{name: "relation-get in relation-created reads the remote app", e: ev("db-relation-created", "db:3", "", "db", ""), tool: "relation-get",
			args: []string{"--format=json"}, stdout: `{"schema":"v2"}` + "\n"},
		{name: "relation-get with neither remote unit nor app", e: install, tool: "relation-get", args: []string{"-r", "db:3"}, code: 2,
			stderr: "ERROR no unit or application specified\n"},
		{name: "relation-get --app of a remote unit reads its app", e: changed, tool: "relation-get", args: []string{"--app", "schema", "db/0"}, stdout: "v2\n"},
		{name: "relation-get --app of an own unit reads the own app", e: install, tool: "relation-get", args: []string{"-r", "cluster:1", "--app", "-", "web/0"},
			stdout: "primary: web/1\n"},
		{name: "relation-get --app of a unit of no app in the relation", e: changed, tool: "relation-get", args: []string{"--app", "-", "nope/3"}, code: 1,
			stderr: "ERROR cannot read settings for application \"nope\" in relation \"db:3\": not in the relation\n"},
		{name: "relation-get departed unit reads empty", e: ev("db-relation-departed", "db:3", "db/7", "db", "db/7"), tool: "relation-get", stdout: "{}\n"},
		{name: "relation-ids defaults to the hook's endpoint", e: changed, tool: "relation-ids", stdout: "db:3\n"},
		{name: "relation-ids by name json", e: install, tool: "relation-ids", args: []string{"cluster", "--format", "json"}, stdout: `["cluster:1"]` + "\n"},
		{name: "relation-ids unknown endpoint", e: install, tool: "relation-ids", args: []string{"nope"}},
		{name: "relation-ids without a relation", e: install, tool: "relation-ids", code: 2, stderr: "ERROR no endpoint name specified\n"},
		{name: "relation-list", e: changed, tool: "relation-list", stdout: "db/0\ndb/1\n"},
		{name: "relation-list --app", e: changed, tool: "relation-list", args: []string{"--app"}, stdout: "db\n"},
		{name: "relation-list of a relation that is gone", e: ev("old-relation-broken", "old:9", "", "logs", ""), tool: "relation-list"},
		{name: "unit-get", e: install, tool: "unit-get", args: []string{"private-address"}, stdout: "10.0.0.5\n"},
		{name: "unit-get unknown", e: install, tool: "unit-get", args: []string{"color"}, code: 2, stderr: "ERROR unknown setting \"color\"\n"},
		{name: "is-leader", e: install, tool: "is-leader", stdout: "False\n"},
		{name: "is-leader json", u: leader, e: install, tool: "is-leader", args: []string{"--format=json"}, stdout: "true\n"},
		{name: "leader-get all", e: install, tool: "leader-get", stdout: "primary: web/1\n"},
		{name: "leader-get key", e: install, tool: "leader-get", args: []string{"primary"}, stdout: "web/1\n"},
		{name: "status-get unset", e: configChanged, tool: "status-get", stdout: "unknown\n"},
		{name: "status-get --include-data", e: configChanged, tool: "status-get", args: []string{"--include-data", "--format", "json"},
			stdout: `{"message":"","status":"unknown","status-data":{}}` + "\n"},
		{name: "status-set --application refused for a follower", e: install, tool: "status-set", args: []string{"--application", "active"}, code: 1,
			stderr: "ERROR this unit is not the leader\n"},
		{name: "status-set too many args", e: install, tool: "status-set", args: []string{"active", "msg", "more"}, code: 2,
			stderr: "ERROR unrecognized args: [\"more\"]\n"},
		{name: "juju-log needs a message", e: install, tool: "juju-log", code: 2, stderr: "ERROR no message specified\n"},
		{name: "juju-log", e: install, tool: "juju-log", args: []string{"-l", "WARNING", "hello", "there"}},
		{name: "open-port bad spec", e: install, tool: "open-port", args: []string{"80/sctp"}, code: 2,
			stderr: "ERROR invalid port \"80/sctp\": expected <port>[/<protocol>], <from>-<to>[/<protocol>] or icmp\n"},
		{name: "opened-ports empty", e: install, tool: "opened-ports"},
		{name: "bad format", e: install, tool: "config-get", args: []string{"--format", "xml"}, code: 2,
			stderr: "ERROR invalid value \"xml\" for flag --format: unknown format \"xml\"\n"},
		{name: "relation-set bad pair", e: changed, tool: "relation-set", args: []string{"a=1", "b"}, code: 2,
			stderr: "ERROR expected \"key=value\", got \"b\"\n"},
		{name: "relation-set duplicate key", e: changed, tool: "relation-set", args: []string{"a=1", "a=2"}, code: 2,
			stderr: "ERROR key \"a\" specified more than once\n"},
		{name: "relation-set to a relation that is gone is dropped", e: ev("old-relation-departed", "old:9", "logs/0", "logs", "logs/0"), tool: "relation-set", args: []string{"a=1"}},
		{name: "unknown tool", e: install, tool: "no-such-tool", code: 1, stderr: "ERROR unknown hook tool \"no-such-tool\"\n"},
	}
}

func TestToolOutputs(t *testing.T) {
	tests := toolCases()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := tt.u
			if u == nil {
				u = testUniverse()
			}
			got := callIn(t, u, tt.e, tt.tool, tt.args...)
			want := response{Code: tt.code, Stdout: tt.stdout, Stderr: tt.stderr}
			if got != want {
				t.Errorf("%s %v:\ngot  %+v\nwant %+v", tt.tool, tt.args, got, want)
			}
		})
	}
}

func TestStaleContextIsRefused(t *testing.T) {
	s, err := newSession(testUniverse(), nil, nil, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	s.begin("first", ev("install", "", "", "", ""))
	s.end()
	s.begin("second", ev("start", "", "", "", ""))
	if r := s.call(&request{Context: "first", Tool: "is-leader"}); r.Code != 1 {
		t.Errorf("a finished hook's tool call got %+v; want refused", r)
	}
	if r := s.call(&request{Context: "second", Tool: "is-leader"}); r.Code != 0 {
		t.Errorf("the running hook's tool call got %+v", r)
	}
}

// serveInstall serves the test universe's install hook, context "ctx",
// on a new socket whose path it returns, until the test ends.
func serveInstall(t *testing.T, token string) (*server, string) {
	t.Helper()
	s, err := newSession(testUniverse(), nil, nil, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	s.begin("ctx", ev("install", "", "", "", ""))
	path := filepath.Join(t.TempDir(), "s.sock")
	srv, err := listen(path, token, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.close)
	return srv, path
}

func TestSocketRequiresTheToken(t *testing.T) {
	_, path := serveInstall(t, "secret")
	ask := func(token string) response {
		conn, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := json.NewEncoder(conn).Encode(&request{Token: token, Context: "ctx", Tool: "is-leader"}); err != nil {
			t.Fatal(err)
		}
		var r response
		if err := json.NewDecoder(conn).Decode(&r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := ask("guess"); r.Code != 1 || r.Stderr != "ERROR hook tool request refused: wrong token\n" {
		t.Errorf("wrong token: %+v", r)
	}
	if r := ask("secret"); r != (response{Stdout: "False\n", Keep: keepHook}) {
		t.Errorf("right token: %+v", r)
	}
}

func TestParsePort(t *testing.T) {
	for in, want := range map[string]string{"80": "80/tcp", "80/UDP": "80/udp", "8000-8010": "8000-8010/tcp", "53-53/udp": "53/udp", "icmp": "icmp"} {
		if got, err := parsePort(in); err != nil || got != want {
			t.Errorf("parsePort(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "65536", "90-80", "80/sctp", "http", "1-2-3"} {
		if got, err := parsePort(in); err == nil {
			t.Errorf("parsePort(%q) = %q; want an error", in, got)
		}
	}
}

// TestRelationGetOwnAppNeedsLeadershipOverNonPeer: Juju's controller lets
// only the leader read its own application's bag over a
// provider-requirer relation; a follower gets "permission denied". Over a
// peer relation every unit reads it.
func TestRelationGetOwnAppNeedsLeadershipOverNonPeer(t *testing.T) {
	hook := `relation-get -r cluster:1 --app primary web > "$FIXPOINT_UNIT_DIR/peer"
if relation-get -r db:3 --app - web 2> "$FIXPOINT_UNIT_DIR/err"; then echo read > "$FIXPOINT_UNIT_DIR/db"; fi
relation-get -r db:3 --app - web/0 2>> "$FIXPOINT_UNIT_DIR/err" || true`
	for _, leader := range []bool{false, true} {
		u := testUniverse()
		u.Leader = leader
		u.Events = []charmapi.Event{ev("config-changed", "", "", "", "")}
		_, _, unitDir, err := runHooks(t, writeCharm(t, map[string]string{"config-changed": hook}), u)
		if err != nil {
			t.Fatal(err)
		}
		if got := readUnitFile(t, unitDir, "peer"); got != "web/1\n" {
			t.Errorf("leader=%v: peer app bag read %q", leader, got)
		}
		_, readErr := os.Stat(filepath.Join(unitDir, "db"))
		errs := readUnitFile(t, unitDir, "err")
		switch {
		case !leader && (readErr == nil || errs != "ERROR permission denied\nERROR permission denied\n"):
			t.Errorf("follower read its own app bag over db:3 (stderr %q)", errs)
		case leader && (readErr != nil || errs != ""):
			t.Errorf("leader could not read its own app bag over db:3: %q", errs)
		}
	}
}
