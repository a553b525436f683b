package legacy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// TestOpsToolOutputs checks the tools ops calls, with the flags ops passes
// (ops/hookcmds) and Juju's output shapes (worker/uniter/runner/jujuc).
func TestOpsToolOutputs(t *testing.T) {
	install := ev("install", "", "", "", "")
	changed := ev("db-relation-changed", "db:3", "db/1", "db", "")
	tests := []struct {
		name, tool string
		e          charmapi.Event
		args       []string
		code       int
		stdout     string
		stderr     string
	}{
		{name: "network-get json", tool: "network-get", e: install, args: []string{"--format=json", "db"},
			stdout: `{"bind-addresses":[{"mac-address":"52:54:00:12:34:56","interface-name":"ens3","addresses":[{"hostname":"","value":"10.0.0.5","cidr":"10.0.0.0/24"}]}],"egress-subnets":["10.0.0.5/32"],"ingress-addresses":["10.0.0.5"]}` + "\n"},
		{name: "network-get yaml keys as Juju prints them", tool: "network-get", e: install, args: []string{"db", "--format", "yaml"},
			stdout: "bind-addresses:\n    - macaddress: \"52:54:00:12:34:56\"\n      interfacename: ens3\n      addresses:\n        - hostname: \"\"\n          address: 10.0.0.5\n          cidr: 10.0.0.0/24\negress-subnets:\n    - 10.0.0.5/32\ningress-addresses:\n    - 10.0.0.5\n"},
		{name: "network-get one key", tool: "network-get", e: changed, args: []string{"db", "--ingress-address"}, stdout: "10.0.0.5\n"},
		{name: "network-get two keys", tool: "network-get", e: install, args: []string{"-r", "3", "db", "--bind-address", "--egress-subnets", "--format=json"},
			stdout: `{"bind-address":"10.0.0.5","egress-subnets":["10.0.0.5/32"]}` + "\n"},
		{name: "network-get unknown relation", tool: "network-get", e: install, args: []string{"-r", "99", "db"}, code: 2,
			stderr: "ERROR invalid value \"99\" for flag -r: relation not found\n"},
		{name: "network-get needs a binding", tool: "network-get", e: install, code: 2, stderr: "ERROR no arguments specified\n"},
		{name: "application-version-set", tool: "application-version-set", e: install, args: []string{"--", "1.2.3"}},
		{name: "opened-ports --endpoints is a flag", tool: "opened-ports", e: install, args: []string{"--endpoints", "--format=json"}, stdout: "[]\n"},
		{name: "relation-model-get outside a relation", tool: "relation-model-get", e: install, code: 2, stderr: "ERROR no relation id specified\n"},
		{name: "action-get in a hook", tool: "action-get", e: install, args: []string{"--format=json"}, code: 1,
			stderr: "ERROR not running an action\n"},
		{name: "secret-get checks the id", tool: "secret-get", e: install, args: []string{"secret:abc"}, code: 2,
			stderr: "ERROR secret URI \"secret:abc\": a secret id is 20 characters of 0-9 and a-v, as \"secret:cn0gqa6qs7s1bm0kfp8g\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := callIn(t, testUniverse(), tt.e, tt.tool, tt.args...)
			want := response{Code: tt.code, Stdout: tt.stdout, Stderr: tt.stderr}
			if got != want {
				t.Errorf("%s %v:\ngot  %+v\nwant %+v", tt.tool, tt.args, got, want)
			}
		})
	}
	for _, name := range []string{"storage-get", "resource-get", "pod-spec-set", "credential-get"} {
		if !IsTool(name) {
			t.Errorf("%s is not a tool: charms calling it would get \"command not found\"", name)
		}
	}
}

// session runs tool calls in one session whose running hook is e, so that
// writes are seen by later calls and end up in the result.
func sessionFor(t *testing.T, u *charmapi.Universe, e charmapi.Event) *session {
	t.Helper()
	s, err := newSession(u, nil, nil, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	s.in.modelUUID = ModelUUID("shop")
	s.begin("ctx", e)
	return s
}

func TestGoalStateAndRelationModel(t *testing.T) {
	s := sessionFor(t, testUniverse(), ev("db-relation-changed", "db:3", "db/1", "db", ""))
	r := s.call(&request{Context: "ctx", Tool: "goal-state", Args: []string{"--format=json"}})
	if r.Code != 0 {
		t.Fatalf("goal-state: %+v", r)
	}
	var flat struct {
		Units     map[string]map[string]string            `json:"units"`
		Relations map[string]map[string]map[string]string `json:"relations"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &flat); err != nil {
		t.Fatalf("goal-state output %q: %v", r.Stdout, err)
	}
	if len(flat.Units) != 2 || flat.Units["web/0"]["status"] != "active" || flat.Units["web/1"]["status"] != "active" {
		t.Errorf("goal-state units = %v; want web/0 and its peer web/1, active", flat.Units)
	}
	db := flat.Relations["db"]
	if db["db"]["status"] != "joined" || db["db/0"]["status"] != "active" || db["db/1"]["status"] != "active" || len(db) != 3 {
		t.Errorf("goal-state relations[db] = %v", db)
	}
	if _, peer := flat.Relations["cluster"]; peer {
		t.Errorf("goal-state lists the peer relation under relations: %v", flat.Relations)
	}
	if since := flat.Units["web/0"]["since"]; !strings.HasSuffix(since, "Z") || !strings.Contains(since, "T") {
		t.Errorf("since = %q; want RFC 3339 in UTC, which ops parses", since)
	}
	r = s.call(&request{Context: "ctx", Tool: "relation-model-get", Args: []string{"--format=json"}})
	want := `{"uuid":"` + ModelUUID("shop") + `"}` + "\n"
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("relation-model-get = %+v; want %s", r, want)
	}
}

func TestModelUUIDIsStableAndShaped(t *testing.T) {
	a, b := ModelUUID("shop"), ModelUUID("shop")
	if a != b || a == ModelUUID("other") {
		t.Fatalf("ModelUUID: %s %s %s", a, b, ModelUUID("other"))
	}
	parts := strings.Split(a, "-")
	if len(parts) != 5 || len(parts[0]) != 8 || len(parts[1]) != 4 || len(parts[2]) != 4 || len(parts[3]) != 4 || len(parts[4]) != 12 || parts[2][0] != '5' {
		t.Errorf("modelUUID = %s; want a version-5 UUID", a)
	}
}

// TestApplicationStatusAndVersionAreKept checks that status-set
// --application (as ops calls it: --application=True) and
// application-version-set land in the unit's private state, and that a
// later call reads the status back.
func TestApplicationStatusAndVersionAreKept(t *testing.T) {
	u := testUniverse()
	u.Leader = true
	s := sessionFor(t, u, ev("install", "", "", "", ""))
	for _, args := range [][]string{{"--application=True", "active", "--", "serving 3 units"}} {
		if r := s.call(&request{Context: "ctx", Tool: "status-set", Args: args}); r.Code != 0 {
			t.Fatalf("status-set %v: %+v", args, r)
		}
	}
	if r := s.call(&request{Context: "ctx", Tool: "application-version-set", Args: []string{"--", "2.4.1"}}); r.Code != 0 {
		t.Fatalf("application-version-set: %+v", r)
	}
	res := s.result()
	if res.State[model.StateAppVersion] != "2.4.1" || !strings.Contains(res.State[model.StateAppStatus], "serving 3 units") {
		t.Fatalf("result state = %v", res.State)
	}
	if res.Status != nil {
		t.Errorf("application status leaked into the unit's status: %+v", res.Status)
	}
	next := testUniverse()
	next.Leader = true
	next.State = res.State
	s2 := sessionFor(t, next, ev("update-status", "", "", "", ""))
	r := s2.call(&request{Context: "ctx", Tool: "status-get", Args: []string{"--include-data", "--format=json", "--application=true"}})
	if r.Code != 0 || !strings.Contains(r.Stdout, `"message":"serving 3 units"`) || !strings.Contains(r.Stdout, `"status":"active"`) {
		t.Errorf("status-get --application in a later call = %+v", r)
	}
}

// TestDepartedUnitsSettingsAreReadable: in db-relation-departed the
// departing unit's last settings, which the universe carries under
// departed, are what relation-get prints; it is no longer listed.
func TestDepartedUnitsSettingsAreReadable(t *testing.T) {
	u := testUniverse()
	u.Relations[1].Departed = map[string]map[string]string{"db/7": {"host": "10.0.0.7", "private-address": "10.0.0.7"}}
	departed := ev("db-relation-departed", "db:3", "db/7", "db", "db/7")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "host: 10.0.0.7\nprivate-address: 10.0.0.7\n"},
		{[]string{"host"}, "10.0.0.7\n"},
		{[]string{"--format=json", "-", "db/7"}, `{"host":"10.0.0.7","private-address":"10.0.0.7"}` + "\n"},
	} {
		if r := callIn(t, u, departed, "relation-get", c.args...); r.Code != 0 || r.Stdout != c.want {
			t.Errorf("relation-get %v = %+v; want %q", c.args, r, c.want)
		}
	}
	if r := callIn(t, u, departed, "relation-list"); r.Stdout != "db/0\ndb/1\n" {
		t.Errorf("relation-list = %q; the departed unit must not be listed", r.Stdout)
	}
}
