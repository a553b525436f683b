package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
)

// TestTopologies runs the scenarios an operator cares about over each
// topology fixpoint runs in: the embedded `up`, three servers with a plain
// HTTP API, and three servers with TLS on the API and agents on their own
// data dirs, set up as README's "A three-node control plane with agents"
// says (startServers follows that section step by step). Each topology is
// one cluster shared by its scenarios, which run in order, each from where
// the last left the environment. Every scenario judges the outcome (status
// JSON: phases, messages, units, relation settings) and how long the
// client waited for the fixed point (fixedPointBound).
func TestTopologies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three clusters; skipped in -short")
	}
	topologies := []struct {
		name  string
		start func(t *testing.T) *topology
	}{
		{"up", startUpTopology},
		{"servers", func(t *testing.T) *topology { return startServers(t, "servers", false) }},
		{"servers-tls", func(t *testing.T) *topology { return startServers(t, "servers-tls", true) }},
	}
	for _, top := range topologies {
		t.Run(top.name, func(t *testing.T) {
			tp := top.start(t)
			late := 0
			for _, sc := range topologyScenarios {
				reached, missed := false, len(tp.late)
				t.Run(sc.name, func(t *testing.T) {
					tp.enter(t)
					sc.run(tp)
					reached = true
				})
				tp.enter(t)
				if sc.gate && !reached {
					t.Fatalf("%s failed: the later scenarios build on it", sc.name)
				}
				// Each scenario costs a stalled topology up to
				// waitTimeout per step: two in a row are enough to show it.
				if len(tp.late) > missed {
					late++
				} else {
					late = 0
				}
				if late == 2 {
					t.Fatalf("two scenarios in a row past the bound (%s): convergence stalls on this topology; the later scenarios are not run", strings.Join(tp.late, "; "))
				}
			}
		})
	}
}

// shop is one shape of the demo environment the scenarios move between.
type shop struct {
	web      int
	related  bool   // the web-db relation
	database string // web's config option
	maxConn  int    // db's config option
	flaky    bool   // a service whose hook fails until its unit holds ./ok
	edge     string // a machine for an edge service (the web charm) related to db
}

// demo is testdata/demo/env.cue as a shop.
var demo = shop{web: 2, related: true, database: "shop", maxConn: 200}

// write writes the shape as an environment with absolute charm paths.
func (s shop) write(tp *topology, name string) string {
	tp.t.Helper()
	charm := func(name string) string { return repo("testdata", "charms", name) }
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: \"fixpoint/v1\"\nname: \"shop\"\nservices: {\n")
	fmt.Fprintf(&b, "\tdb: {charm: %q, units: 2, config: {max_connections: %d}}\n", charm("db"), s.maxConn)
	fmt.Fprintf(&b, "\tweb: {charm: %q, units: %d, config: {database: %q}}\n", charm("web"), s.web, s.database)
	if s.flaky {
		fmt.Fprintf(&b, "\tflaky: {charm: %q, units: 1}\n", charm("flaky"))
	}
	if s.edge != "" {
		fmt.Fprintf(&b, "\tedge: {charm: %q, units: 1, placement: [%q]}\n", charm("web"), s.edge)
	}
	b.WriteString("}\nrelations: {\n")
	if s.related {
		b.WriteString("\t\"web-db\": [\"web:db\", \"db:db\"]\n")
	}
	if s.edge != "" {
		b.WriteString("\t\"edge-db\": [\"edge:db\", \"db:db\"]\n")
	}
	b.WriteString("}\n")
	path := filepath.Join(tp.envDir, name+".cue")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		tp.t.Fatal(err)
	}
	return path
}

// check judges the running environment against the shape: the fixed
// point, the units the shape wants, each settled with the message its
// charm gives for it, and db's relation settings granting exactly the
// clients. A scale-up after a scale-down numbers web units on from the
// highest ever used, so web units are counted, not named.
func (s shop) check(tp *topology) *engine.Status {
	t := tp.t
	t.Helper()
	st := tp.status()
	if st == nil {
		t.Fatal("no status")
	}
	if !st.Converged {
		t.Fatalf("not converged: %s", st.Summary)
	}
	var webs []string
	for name, u := range st.Units {
		if u.Service == "web" {
			webs = append(webs, name)
		}
	}
	sort.Slice(webs, func(i, j int) bool { return model.UnitLess(webs[i], webs[j]) })
	want := append([]string{"db/0", "db/1"}, webs...)
	if s.flaky {
		want = append(want, "flaky/0")
	}
	if s.edge != "" {
		want = append(want, "edge/0")
	}
	slices.Sort(want)
	got := unitNamesOf(st)
	slices.Sort(got)
	if len(webs) != s.web || !slices.Equal(got, want) {
		t.Fatalf("units %v, want db/0, db/1, flaky/0 (%v), edge/0 (%v) and %d web units", got, s.flaky, s.edge != "", s.web)
	}
	var clients []string
	if s.related {
		clients = webs
	}
	if s.edge != "" {
		clients = append(slices.Clone(clients), "edge/0")
	}
	leader := st.Services["db"].Leader
	n := fmt.Sprintf("%d clients", len(clients))
	if len(clients) == 1 {
		n = "1 client"
	}
	for _, name := range want {
		u := st.Units[name]
		var msg string
		state := "active"
		switch {
		case name == leader:
			msg = "primary, " + n
		case u.Service == "db":
			msg = "replica of " + leader + ", " + n
		case u.Service == "web" && !s.related:
			state, msg = "blocked", "needs a db relation"
		case u.Service == "web" || u.Service == "edge":
			msg = fmt.Sprintf("connected to 127.0.0.1:6379 db %s as %s", s.database, u.Service)
		case u.Service == "flaky":
			msg = "recovered"
		}
		if u.Phase != engine.Settled || u.Status.State != state || u.Status.Message != msg {
			t.Errorf("%s: %s %s %q, want settled %s %q", name, u.Phase, u.Status.State, u.Status.Message, state, msg)
		}
		if s.edge != "" && u.Service == "edge" && u.Machine != s.edge {
			t.Errorf("%s runs on %q, want %s", name, u.Machine, s.edge)
		}
	}
	if related := hasRelation(st, "web:db", "db:db"); related != s.related {
		t.Errorf("status relations %s: web-db there %v, want %v", jsonString(st.Relations), related, s.related)
	}
	// What db's leader wrote for each client service: the grant.
	r := tp.cli("show-unit", leader, "-o", "json")
	var d struct {
		Relations []*engine.UnitRelation `json:"relations"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &d) != nil {
		t.Fatalf("show-unit %s: %d\n%s%s", leader, r.code, r.stdout, r.stderr)
	}
	granted := map[string]*engine.UnitRelation{}
	for _, rel := range d.Relations {
		if svc, _, _ := strings.Cut(rel.Remote, ":"); rel.Endpoint == "db" {
			granted[svc] = rel
		}
	}
	for _, svc := range []string{"web", "edge"} {
		var units []string
		for _, c := range clients {
			if strings.HasPrefix(c, svc+"/") {
				units = append(units, c)
			}
		}
		rel := granted[svc]
		switch {
		case len(units) == 0 && rel != nil:
			t.Errorf("%s still relates to %s: %s", leader, svc, jsonString(rel))
		case len(units) == 0:
		case rel == nil:
			t.Errorf("%s has no db relation to %s: %s", leader, svc, r.stdout)
		case rel.Settings["allowed-units"] != strings.Join(units, " ") || rel.Settings["database"] != s.database || rel.Settings["user"] != svc:
			t.Errorf("%s grants %s: %s; want allowed-units %q, database %q, user %q", leader, svc, jsonString(rel.Settings), strings.Join(units, " "), s.database, svc)
		}
	}
	return st
}

// hasRelation says whether status lists a relation between the endpoints.
func hasRelation(st *engine.Status, a, b string) bool {
	for _, r := range st.Relations {
		if slices.Contains(r.Endpoints, a) && slices.Contains(r.Endpoints, b) {
			return true
		}
	}
	return false
}

// topologyScenarios run in order on one topology; each leaves the
// environment at a fixed point for the next. A gate's failure ends the
// topology's run.
var topologyScenarios = []struct {
	name string
	gate bool
	run  func(tp *topology)
}{
	{"deploy the demo", true, func(tp *topology) {
		env := repo("testdata", "demo", "env.cue")
		if tp.c == nil {
			start := time.Now()
			tp.startUp(env)
			tp.waitFrom(start, "up -f, then wait")
		} else {
			tp.apply(env, exitOK)
		}
		demo.check(tp)
	}},
	{"scale up", false, func(tp *topology) {
		s := demo
		s.web = 3
		tp.apply(s.write(tp, "scale-up"), exitOK)
		s.check(tp)
	}},
	{"scale down", false, func(tp *topology) {
		s := demo
		s.web = 1
		tp.apply(s.write(tp, "scale-down"), exitOK)
		s.check(tp)
	}},
	{"remove a relation", false, func(tp *topology) {
		s := demo
		s.web, s.related = 1, false
		tp.apply(s.write(tp, "unrelated"), exitOK)
		s.check(tp)
	}},
	{"add a relation", false, func(tp *topology) {
		s := demo
		s.web = 1
		tp.apply(s.write(tp, "related"), exitOK)
		s.check(tp)
	}},
	{"change config", false, func(tp *topology) {
		s := demo
		s.web, s.database, s.maxConn = 1, "orders", 300
		tp.apply(s.write(tp, "config"), exitOK)
		s.check(tp)
		if r := tp.cli("config", "db", "-o", "json"); r.code != 0 || !strings.Contains(r.stdout, `"max_connections"`) || !strings.Contains(r.stdout, "300") {
			tp.t.Errorf("config db: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}},
	{"failing hook then resolved", false, func(tp *topology) {
		t := tp.t
		s := demo
		s.web, s.database, s.maxConn, s.flaky = 1, "orders", 300, true
		r := tp.apply(s.write(tp, "flaky"), exitUnitErr)
		if !strings.Contains(r.stderr, "unit flaky/0 is in error") || !strings.Contains(r.stderr, "backend not ready") {
			t.Fatalf("apply --wait does not name the unit and its error:\n%s", r.stderr)
		}
		if st := tp.status(); st == nil || st.Units["flaky/0"] == nil || st.Units["flaky/0"].Phase != engine.Error {
			t.Fatalf("flaky/0 is not in error: %s", jsonString(st))
		}
		// Fix the backend, then tell the control plane.
		if err := os.WriteFile(filepath.Join(tp.unitDir("flaky/0"), "ok"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if r := tp.cli("resolved", "flaky/0"); r.code != 0 {
			t.Fatalf("resolved flaky/0: %d %s", r.code, r.stderr)
		}
		tp.waitFrom(start, "resolved, then wait")
		s.check(tp)
	}},
	{"leader failover", false, func(tp *topology) {
		t := tp.t
		s := demo
		s.database, s.maxConn = "orders", 300
		env := s.write(tp, "failover")
		if tp.c == nil {
			// up is the whole control plane: kill it and start it again
			// on its data dir with a change.
			tp.up.kill()
			start := time.Now()
			tp.startUp(env)
			tp.waitFrom(start, "kill -9, up -f, then wait")
			s.check(tp)
			return
		}
		li := tp.c.waitLeader("a leader", -1)
		tp.c.sigkill(li)
		t.Logf("killed the leader n%d", li+1)
		// The client rides through the election: FIXPOINT_ADDR still
		// names the dead node.
		tp.apply(env, exitOK)
		s.check(tp)
		// The killed node rejoins and catches up, for the scenarios after.
		tp.c.restart(li)
		tp.c.waitCaughtUp(fmt.Sprintf("n%d rejoined", li+1))
	}},
	{"agent killed and restarted", false, func(tp *topology) {
		t := tp.t
		if tp.c == nil {
			t.Skip("up's agent lives in its process: leader failover kills and restarts it")
		}
		// While m1's agent is dead, a change reaches its units; it
		// catches up when the agent comes back on its data dir.
		s := demo
		s.maxConn = 300
		tp.c.agents["m1"].kill()
		start := time.Now()
		if r := tp.cli("apply", "-f", s.write(tp, "agent-restart"), "--yes"); r.code != 0 {
			t.Fatalf("apply: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		tp.c.agent("m1")
		tp.waitFrom(start, "apply, agent restart, then wait")
		st := s.check(tp)
		on := 0
		for _, u := range st.Units {
			if u.Machine == "m1" {
				on++
			}
		}
		if on == 0 || st.Machines["m1"] == nil || st.Machines["m1"].State == "lost" {
			t.Errorf("m1 holds %d units, machine %s", on, jsonString(st.Machines["m1"]))
		}
	}},
	{"agent pointed at a follower only", false, func(tp *topology) {
		t := tp.t
		if tp.c == nil {
			t.Skip("up runs one control-plane node and its own agent")
		}
		fi := (tp.c.waitLeader("a leader", -1) + 1) % 3
		tp.c.agent("m3", tp.c.addrs[fi])
		tp.c.waitMachines("m3")
		s := demo
		s.maxConn, s.edge = 300, "m3"
		tp.apply(s.write(tp, "follower-agent"), exitOK)
		s.check(tp)
	}},
}
