package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// fixture charms: db provides sql and has peers, web requires sql, log is
// a container-scoped subordinate.
func charms() map[string]*Charm {
	return map[string]*Charm{
		"h-db": {Hash: "h-db", Meta: CharmMeta{Name: "db",
			Provides: map[string]Endpoint{"db": {Interface: "sql"}, "admin": {Interface: "sql-admin"}},
			Peers:    map[string]Endpoint{"cluster": {Interface: "db-cluster"}},
			Options:  map[string]Option{"max_connections": {Type: "int", Default: float64(100)}, "mode": {Type: "string", Default: "fast"}}}},
		"h-web": {Hash: "h-web", Meta: CharmMeta{Name: "web",
			Requires: map[string]Endpoint{"db": {Interface: "sql"}, "cache": {Interface: "memcache", Limit: 1}},
			Provides: map[string]Endpoint{"website": {Interface: "http"}}}},
		"h-log": {Hash: "h-log", Meta: CharmMeta{Name: "log", Subordinate: true,
			Requires: map[string]Endpoint{"host": {Interface: "juju-info", Scope: Container}}}},
		"h-cache": {Hash: "h-cache", Meta: CharmMeta{Name: "cache",
			Provides: map[string]Endpoint{"cache": {Interface: "memcache"}}}},
	}
}

func intp(n int) *int { return &n }

func env(rels map[string][]string) *Environment {
	return &Environment{APIVersion: APIVersion, Name: "shop",
		Services: map[string]ServiceSpec{
			"db":  {Charm: "./db", CharmHash: "h-db", Units: intp(2)},
			"web": {Charm: "./web", CharmHash: "h-web", Units: intp(2)},
		},
		Relations: rels,
	}
}

func resolveErr(t *testing.T, e *Environment) string {
	t.Helper()
	_, err := Resolve(e, charms())
	if err == nil {
		t.Fatalf("Resolve accepted %v", e.Relations)
	}
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error is %T, want Problems", err)
	}
	return err.Error()
}

func TestRelationTwoEndpointsBound(t *testing.T) {
	d, err := Resolve(env(map[string][]string{"web-db": {"web:db", "db:db"}}), charms())
	if err != nil {
		t.Fatal(err)
	}
	r := d.Relations["db:db web:db"]
	if r == nil {
		t.Fatalf("relation not keyed by its endpoints: %v", d.Relations)
	}
	if r.Interface != "sql" || r.Scope != Global || len(r.Endpoints) != 2 {
		t.Fatalf("relation = %+v", r)
	}
}

func TestRelationShorthandPicksTheOnlyFit(t *testing.T) {
	d, err := Resolve(env(map[string][]string{"web-db": {"web", "db"}}), charms())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Relations["db:db web:db"]; !ok {
		t.Fatalf("shorthand bound to %v", d.Relations)
	}
}

func TestRelationNeedsTwoEndpoints(t *testing.T) {
	for _, ends := range [][]string{{"web:db"}, {"web:db", "db:db", "db:admin"}} {
		msg := resolveErr(t, env(map[string][]string{"r": ends}))
		if !strings.Contains(msg, "exactly two endpoints") {
			t.Errorf("%v: %s", ends, msg)
		}
	}
}

func TestRelationIdenticalEndpointsRejected(t *testing.T) {
	msg := resolveErr(t, env(map[string][]string{"r": {"db:db", "db:db"}}))
	if !strings.Contains(msg, "to itself") {
		t.Fatal(msg)
	}
}

func TestRelationInterfaceMustMatch(t *testing.T) {
	msg := resolveErr(t, env(map[string][]string{"r": {"web:db", "db:admin"}}))
	if !strings.Contains(msg, "interfaces differ") || !strings.Contains(msg, `"sql-admin"`) {
		t.Fatal(msg)
	}
}

func TestRelationProvidesMeetsRequires(t *testing.T) {
	e := env(map[string][]string{"r": {"db:db", "db2:db"}})
	e.Services["db2"] = ServiceSpec{Charm: "./db", CharmHash: "h-db"}
	msg := resolveErr(t, e)
	if !strings.Contains(msg, "one side must provide and the other require") {
		t.Fatal(msg)
	}
}

func TestRelationDuplicateRejected(t *testing.T) {
	msg := resolveErr(t, env(map[string][]string{"a": {"web:db", "db:db"}, "b": {"db:db", "web"}}))
	if !strings.Contains(msg, "already exists") {
		t.Fatal(msg)
	}
}

func TestRelationPeerEndpointCannotBeNamed(t *testing.T) {
	msg := resolveErr(t, env(map[string][]string{"r": {"web:db", "db:cluster"}}))
	if !strings.Contains(msg, "peer endpoint") {
		t.Fatal(msg)
	}
}

func TestRelationUnknownEndpointListsTheRealOnes(t *testing.T) {
	msg := resolveErr(t, env(map[string][]string{"r": {"web:database", "db:db"}}))
	if !strings.Contains(msg, `no endpoint "database"`) || !strings.Contains(msg, "cache, db, juju-info, website") {
		t.Fatal(msg)
	}
}

func TestPeerRelationsCreatedPerPeersEndpoint(t *testing.T) {
	d, err := Resolve(env(nil), charms())
	if err != nil {
		t.Fatal(err)
	}
	r := d.Relations["db:cluster"]
	if r == nil || len(r.Endpoints) != 1 || r.Endpoints[0].Role != Peer {
		t.Fatalf("peer relation = %+v (all: %v)", r, d.Relations)
	}
	if len(d.Relations) != 1 {
		t.Fatalf("web has no peers endpoint, yet relations = %v", d.Relations)
	}
}

func TestContainerScopeWhenEitherSideIs(t *testing.T) {
	e := env(map[string][]string{"web-log": {"web:juju-info", "log:host"}})
	e.Services["log"] = ServiceSpec{Charm: "./log", CharmHash: "h-log"}
	d, err := Resolve(e, charms())
	if err != nil {
		t.Fatal(err)
	}
	r := d.Relations["log:host web:juju-info"]
	if r == nil || r.Scope != Container {
		t.Fatalf("relation = %+v", r)
	}
}

func TestSubordinateNeedsContainerRelation(t *testing.T) {
	e := env(nil)
	e.Services["log"] = ServiceSpec{Charm: "./log", CharmHash: "h-log"}
	msg := resolveErr(t, e)
	if !strings.Contains(msg, "container-scoped relation") {
		t.Fatal(msg)
	}
}

func TestLimitRespected(t *testing.T) {
	e := env(map[string][]string{"c1": {"web:cache", "c1:cache"}, "c2": {"web:cache", "c2:cache"}})
	e.Services["c1"] = ServiceSpec{Charm: "./cache", CharmHash: "h-cache"}
	e.Services["c2"] = ServiceSpec{Charm: "./cache", CharmHash: "h-cache"}
	msg := resolveErr(t, e)
	if !strings.Contains(msg, "allows 1 relation") {
		t.Fatal(msg)
	}
}

func TestConfigCheckedAndDefaulted(t *testing.T) {
	e := env(nil)
	e.Services["db"] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Config: map[string]any{"max_connections": "lots"}}
	msg := resolveErr(t, e)
	if !strings.Contains(msg, "services.db.config.max_connections") || !strings.Contains(msg, "type int") {
		t.Fatal(msg)
	}
	e.Services["db"] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Config: map[string]any{"max_connections": float64(200)}}
	d, err := Resolve(e, charms())
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Services["db"].Config; got["max_connections"] != int64(200) || got["mode"] != "fast" {
		t.Fatalf("config = %v", got)
	}
}

// deployCmd is a deploy of env with the fixture charms.
func deployCmd(e *Environment) *Command {
	return &Command{Op: OpDeploy, Deploy: &Deploy{Env: *e, Charms: charms()}}
}

func apply(t *testing.T, s *State, idx uint64, c *Command) *Response {
	t.Helper()
	// Round-trip through JSON as the log does.
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var dc Command
	if err := json.Unmarshal(data, &dc); err != nil {
		t.Fatal(err)
	}
	resp, err := s.Apply(idx, &dc)
	if err != nil {
		t.Fatalf("apply %s at %d: %v", c.Op, idx, err)
	}
	return resp
}

func TestRelationIdentsAndIDs(t *testing.T) {
	s := NewState()
	apply(t, s, 1, deployCmd(env(map[string][]string{"web-db": {"web:db", "db:db"}})))
	var idents []string
	for _, id := range s.SortedRelations() {
		r := s.Relations[id]
		for _, e := range r.Endpoints {
			idents = append(idents, e.Service+"="+r.Ident(e.Service))
		}
	}
	want := "db=cluster:0 db=db:1 web=db:1"
	if got := strings.Join(idents, " "); got != want {
		t.Fatalf("idents %q, want %q", got, want)
	}
}

// script is a fixed sequence of commands exercising most of Apply.
func script() []*Command {
	rel := map[string][]string{"web-db": {"web:db", "db:db"}}
	e2 := env(rel)
	e2.Services["web"] = ServiceSpec{Charm: "./web", CharmHash: "h-web", Units: intp(3)}
	return []*Command{
		{Op: OpMachine, Machine: &RegisterMachine{Name: "m1", Address: "10.0.0.1"}},
		deployCmd(env(rel)),
		{Op: OpMachine, Machine: &RegisterMachine{Name: "m2", Address: "10.0.0.2"}},
		{Op: OpResults, Results: []Result{{Unit: "db/0", Hash: "u1", Leader: true, Settings: map[int]map[string]string{1: {"host": "10.0.0.1"}}, Seen: &Seen{Life: Alive}}}},
		deployCmd(e2),
		{Op: OpResults, Results: []Result{{Unit: "web/0", Hash: "u2", Error: "boom", RetryAt: 99}}},
		{Op: OpResolve, Resolve: &ResolveUnit{Unit: "web/0"}},
	}
}

func TestApplyIsDeterministic(t *testing.T) {
	var outs []string
	for run := 0; run < 3; run++ {
		s := NewState()
		for i, c := range script() {
			apply(t, s, uint64(i+1), c)
		}
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, string(data))
	}
	if outs[0] != outs[1] || outs[1] != outs[2] {
		t.Fatal("the same commands gave different state bytes")
	}
}

func TestRefusedCommandChangesNothing(t *testing.T) {
	s := NewState()
	apply(t, s, 1, deployCmd(env(nil)))
	before, _ := json.Marshal(s)
	bad := deployCmd(env(map[string][]string{"r": {"web:nope", "db"}}))
	if _, err := s.Apply(2, bad); err == nil {
		t.Fatal("bad deploy accepted")
	}
	s.Index = 1
	after, _ := json.Marshal(s)
	if string(before) != string(after) {
		t.Fatalf("refused deploy changed the state:\n%s\n%s", before, after)
	}
}

func TestStaleDeployRefused(t *testing.T) {
	s := NewState()
	apply(t, s, 1, deployCmd(env(nil)))
	c := deployCmd(env(nil))
	c.Deploy.BaseIndex = 7
	_, err := s.Apply(2, c)
	if err == nil || !strings.Contains(err.Error(), "run plan again") {
		t.Fatalf("err = %v", err)
	}
}

func TestRequestIDAppliesOnce(t *testing.T) {
	s := NewState()
	c := deployCmd(env(nil))
	c.RequestID = "req-1"
	apply(t, s, 1, c)
	units := len(s.Units)
	e := env(nil)
	e.Services["web"] = ServiceSpec{Charm: "./web", CharmHash: "h-web", Units: intp(5)}
	c2 := deployCmd(e)
	c2.RequestID = "req-1"
	if resp := apply(t, s, 2, c2); !resp.Duplicate {
		t.Fatal("duplicate request not reported")
	}
	if len(s.Units) != units {
		t.Fatalf("duplicate request applied: %d units, want %d", len(s.Units), units)
	}
}

func TestPlacementSpreadAndLeaders(t *testing.T) {
	s := NewState()
	apply(t, s, 1, deployCmd(env(nil)))
	if s.Units["db/0"].Machine != "" || s.Services["db"].Leader != "" {
		t.Fatal("placed or elected without a machine")
	}
	// Both machines arrive in one entry's worth of time: spread evenly.
	apply(t, s, 2, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "a", Address: "10.0.0.1"}})
	if s.Units["db/1"].Machine != "a" {
		t.Fatalf("db/1 on %q with only machine a registered", s.Units["db/1"].Machine)
	}
	e := env(nil)
	e.Services["db"] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Units: intp(4)}
	apply(t, s, 3, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "b", Address: "10.0.0.2"}})
	apply(t, s, 4, deployCmd(e))
	if s.Units["db/2"].Machine != "b" || s.Units["db/3"].Machine != "b" {
		t.Fatalf("new units not spread to the emptier machine: %q %q", s.Units["db/2"].Machine, s.Units["db/3"].Machine)
	}
	if s.Units["db/0"].Machine != "a" || s.Services["db"].Leader != "db/0" {
		t.Fatalf("db/0 on %q, leader %q", s.Units["db/0"].Machine, s.Services["db"].Leader)
	}
	apply(t, s, 5, &Command{Op: OpLiveness, Liveness: &SetLiveness{Lost: map[string]bool{"a": true}}})
	if got := s.Services["db"].Leader; got != "db/2" {
		t.Fatalf("leader stayed on a lost machine: %q", got)
	}
}

func TestScaleDownGoesDyingThenRemoved(t *testing.T) {
	s := NewState()
	apply(t, s, 1, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "a", Address: "10.0.0.1"}})
	apply(t, s, 2, deployCmd(env(nil)))
	apply(t, s, 3, &Command{Op: OpResults, Results: []Result{{Unit: "web/1", Hash: "x", Seen: &Seen{Life: Alive}}}})
	e := env(nil)
	e.Services["web"] = ServiceSpec{Charm: "./web", CharmHash: "h-web", Units: intp(1)}
	resp := apply(t, s, 4, deployCmd(e))
	if len(resp.Changes) != 1 || resp.Changes[0].Kind != RemoveUnits || resp.Changes[0].Units[0] != "web/1" {
		t.Fatalf("changes = %v", resp.Changes)
	}
	if s.Units["web/1"].Life != Dying {
		t.Fatal("web/1 not dying")
	}
	apply(t, s, 5, &Command{Op: OpResults, Results: []Result{{Unit: "web/1", Hash: "y", Seen: &Seen{Life: Dying}}}})
	if _, ok := s.Units["web/1"]; ok {
		t.Fatal("web/1 not removed after its last reconcile")
	}
	e.Services["web"] = ServiceSpec{Charm: "./web", CharmHash: "h-web", Units: intp(2)}
	apply(t, s, 6, deployCmd(e))
	if _, ok := s.Units["web/2"]; !ok {
		t.Fatalf("unit numbers reused? units: %v", s.SortedUnits())
	}
}

func TestResolvedRules(t *testing.T) {
	s := NewState()
	apply(t, s, 1, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "a", Address: "10.0.0.1"}})
	apply(t, s, 2, deployCmd(env(nil)))
	if _, err := s.Apply(3, &Command{Op: OpResolve, Resolve: &ResolveUnit{Unit: "web/0"}}); err == nil || !strings.Contains(err.Error(), "not in error") {
		t.Fatalf("resolving a healthy unit: %v", err)
	}
	apply(t, s, 4, &Command{Op: OpResults, Results: []Result{{Unit: "web/0", Hash: "h1", Error: "boom"}}})
	apply(t, s, 5, &Command{Op: OpResolve, Resolve: &ResolveUnit{Unit: "web/0"}})
	_, err := s.Apply(6, &Command{Op: OpResolve, Resolve: &ResolveUnit{Unit: "web/0", NoRetry: true}})
	if err == nil || !strings.Contains(err.Error(), "already marked resolved") {
		t.Fatalf("second resolve with the other mode: %v", err)
	}
	apply(t, s, 7, &Command{Op: OpResults, Results: []Result{{Unit: "web/1", Hash: "h2", Error: "boom", Seen: &Seen{Life: Alive, ConfigRev: 2}}}})
	apply(t, s, 8, &Command{Op: OpResolve, Resolve: &ResolveUnit{Unit: "web/1", NoRetry: true}})
	if u := s.Units["web/1"]; u.Error != nil || u.Reconciled != "h2" || u.Seen == nil || u.Seen.ConfigRev != 2 {
		t.Fatalf("--no-retry left %+v", u)
	}
	// A retry of h2 that was running when the operator accepted it fails
	// after: the unit stays out of error.
	apply(t, s, 9, &Command{Op: OpResults, Results: []Result{{Unit: "web/1", Hash: "h2", Error: "boom again"}}})
	if u := s.Units["web/1"]; u.Error != nil || u.Reconciled != "h2" {
		t.Fatalf("a failure of the accepted universe put web/1 back in error: %+v", u)
	}
	// A timer run of the accepted universe is a new run: its failure counts.
	apply(t, s, 10, &Command{Op: OpResults, Results: []Result{{Unit: "web/1", Hash: "h2", Error: "update-status failed", Timer: true}}})
	if u := s.Units["web/1"]; u.Error == nil {
		t.Fatalf("a failed timer run was dropped: %+v", u)
	}
}

// TestResolvedBatch: resolving a service marks every unit of it in error
// and skips the others (healthy, or marked the other way); resolving all
// does so across services; a batch names no unit and is one command.
func TestResolvedBatch(t *testing.T) {
	s := NewState()
	apply(t, s, 1, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "a", Address: "10.0.0.1"}})
	e := env(nil)
	e.Services["web"] = ServiceSpec{Charm: "./web", CharmHash: "h-web", Units: intp(4)}
	apply(t, s, 2, deployCmd(e))
	apply(t, s, 3, &Command{Op: OpResults, Results: []Result{
		{Unit: "web/0", Hash: "h0", Error: "boom"}, {Unit: "web/2", Hash: "h2", Error: "boom"},
		{Unit: "web/3", Hash: "h3", Error: "boom"}, {Unit: "db/0", Hash: "d0", Error: "boom"}}})
	apply(t, s, 4, &Command{Op: OpResolve, Resolve: &ResolveUnit{Unit: "web/3", NoRetry: true}})
	apply(t, s, 5, &Command{Op: OpResults, Results: []Result{{Unit: "web/3", Hash: "h4", Error: "again"}}})
	apply(t, s, 6, &Command{Op: OpResolve, Resolve: &ResolveUnit{Unit: "web/3"}})
	resp := apply(t, s, 7, &Command{Op: OpResolve, Resolve: &ResolveUnit{Service: "web", NoRetry: true}})
	if strings.Join(resp.Resolved, " ") != "web/0 web/2" {
		t.Fatalf("resolved web --no-retry marked %v, want web/0 web/2 (web/1 is healthy, web/3 marked to retry)", resp.Resolved)
	}
	for _, name := range []string{"web/0", "web/2"} {
		if u := s.Units[name]; u.Error != nil || u.Index != 7 {
			t.Errorf("%s after resolved web --no-retry: %+v", name, u)
		}
	}
	if u := s.Units["db/0"]; u.Error == nil || u.Resolved != nil {
		t.Errorf("resolved web touched db/0: %+v", u)
	}
	resp = apply(t, s, 8, &Command{Op: OpResolve, Resolve: &ResolveUnit{All: true}})
	if strings.Join(resp.Resolved, " ") != "db/0" || s.Units["db/0"].Resolved == nil {
		t.Fatalf("resolved --all marked %v", resp.Resolved)
	}
	for _, bad := range []*ResolveUnit{{}, {Unit: "web/0", Service: "web"}, {All: true, Service: "web"}, {Service: "Web!"}} {
		if err := (&Command{Op: OpResolve, Resolve: bad}).Validate(); err == nil {
			t.Errorf("resolve %+v validated", bad)
		}
	}
}

func TestDivergenceBound(t *testing.T) {
	s := NewState()
	apply(t, s, 1, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "a", Address: "10.0.0.1"}})
	apply(t, s, 2, deployCmd(env(nil)))
	idx := uint64(3)
	for i := 0; i <= DivergeBound; i++ {
		apply(t, s, idx, &Command{Op: OpResults, Results: []Result{{Unit: "web/0", Hash: fmt.Sprint("u", i), Output: fmt.Sprint(i), Churn: []string{"relations.db:1.units.db/0.x (written by db/0)"}, Seen: &Seen{Life: Alive}}}})
		idx++
	}
	u := s.Units["web/0"]
	if u.Error == nil || u.Error.Kind != ErrDiverged || !strings.Contains(u.Error.Message, "db/0") {
		t.Fatalf("error = %+v", u.Error)
	}
}

func TestDivergenceSameUniverseOtherOutput(t *testing.T) {
	s := NewState()
	apply(t, s, 1, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "a", Address: "10.0.0.1"}})
	apply(t, s, 2, deployCmd(env(nil)))
	apply(t, s, 3, &Command{Op: OpResults, Results: []Result{{Unit: "web/0", Hash: "u1", Output: "o1", Seen: &Seen{Life: Alive}}}})
	apply(t, s, 4, &Command{Op: OpResults, Results: []Result{{Unit: "web/0", Hash: "u2", Output: "o2", Seen: &Seen{Life: Alive}}}})
	apply(t, s, 5, &Command{Op: OpResults, Results: []Result{{Unit: "web/0", Hash: "u1", Output: "o3", Seen: &Seen{Life: Alive}}}})
	if u := s.Units["web/0"]; u.Error == nil || u.Error.Kind != ErrDiverged {
		t.Fatalf("error = %+v", u.Error)
	}
}

func TestLeaderOnlyWritesRefusedAfterLeadershipMoved(t *testing.T) {
	s := NewState()
	apply(t, s, 1, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "a", Address: "10.0.0.1"}})
	apply(t, s, 2, deployCmd(env(nil)))
	resp := apply(t, s, 3, &Command{Op: OpResults, Results: []Result{{Unit: "db/1", Hash: "u", Leader: true, LeaderData: map[string]string{"k": "v"}, Seen: &Seen{Life: Alive}}}})
	if s.Services["db"].LeaderData != nil || len(resp.Skipped) == 0 {
		t.Fatalf("leader data from a non-leader applied: %+v", s.Services["db"].LeaderData)
	}
}
