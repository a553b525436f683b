package sim

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// Two charms for the simulator's own tests: a server that answers every
// client that asked, and a client that asks and waits for the answer.
var (
	serverMeta = model.CharmMeta{Name: "server",
		Provides: map[string]model.Endpoint{"api": {Interface: "api"}},
		Peers:    map[string]model.Endpoint{"peers": {Interface: "server-peers"}},
		Options:  map[string]model.Option{"port": {Type: "int", Default: 80}}}
	clientMeta = model.CharmMeta{Name: "client",
		Requires: map[string]model.Endpoint{"api": {Interface: "api"}}}
)

func server(u *charmapi.Universe) (*charmapi.Result, error) {
	opts := u.Options()
	port := opts.Int("port", 80)
	if err := opts.Err(); err != nil {
		return nil, err
	}
	res := charmapi.NewResult()
	for _, rel := range u.RelationsNamed("api") {
		bag := res.Local(rel.Ident).Set("url", fmt.Sprintf("http://%s:%d", u.Address, port))
		if asked := rel.MembersWith("want"); len(asked) > 0 {
			bag.Set("granted", charmapi.JoinUnits(asked))
		}
	}
	if peers := u.Relation("peers"); peers != nil {
		res.Local(peers.Ident).Set("n", fmt.Sprint(u.UnitNumber()))
		if u.Leader {
			res.App(peers.Ident).Set("leader", u.Unit)
		}
	}
	return res.Active("serving"), nil
}

func client(u *charmapi.Universe) (*charmapi.Result, error) {
	res := charmapi.NewResult()
	rel := u.Relation("api")
	if rel == nil {
		return res.Blocked("needs an api relation"), nil
	}
	res.Local(rel.Ident).Set("want", "yes")
	for _, m := range rel.Members() {
		if strings.Contains(" "+rel.Get(m, "granted")+" ", " "+u.Unit+" ") {
			return res.Activef("using %s", rel.Get(m, "url")), nil
		}
	}
	return res.Waiting("waiting for access"), nil
}

func serverClient(servers, clients int) *Env {
	env := NewEnv("api")
	env.DeployMeta("server", serverMeta).Units(servers).Config("port", 8080)
	env.DeployMeta("client", clientMeta).Units(clients)
	env.Relate("client:api", "server:api")
	env.Hook("server", Func(server)).Hook("client", Func(client))
	return env
}

func TestSimulateConverges(t *testing.T) {
	rep := converges(t, serverClient(2, 3), Options{Schedules: 30, Seed: 7})
	if len(rep.Schedules) != 30 || len(rep.FixedPoints) != 1 {
		t.Fatalf("report: %s", rep)
	}
	final := rep.FixedPoints[0].Settings
	for key, want := range map[string]string{
		"server/0 relations.api:0.local.granted": "client/0 client/1 client/2",
		"server/1 relations.api:0.local.url":     "http://127.0.0.1:8080",
		"server relations.peers:1.app.leader":    "server/0",
		"client/2 status":                        "active: using http://127.0.0.1:8080",
	} {
		if final[key] != want {
			t.Errorf("%s = %q; want %q\nfinal settings: %v", key, final[key], want, final)
		}
	}
	rc := rep.Reconciles()
	if len(rc) != 30 || rc[0] < 5 || rc[len(rc)-1] > 60 {
		t.Errorf("reconciles %v", rc)
	}
	// The universe a unit settled on, as the engine builds it.
	u := rep.Schedules[0].Universe("client/0")
	if got := u.Relation("api").Get("server/1", "granted"); got != "client/0 client/1 client/2" {
		t.Errorf("client/0 sees server/1 granting %q", got)
	}
	if got := u.Relation("api").Get("server/1", "private-address"); got != "127.0.0.1" {
		t.Errorf("private-address = %q", got)
	}
}

func TestSimulateIsDeterministic(t *testing.T) {
	opts := Options{Schedules: 12, Seed: 42, Trace: true}
	a, err := serverClient(2, 2).Simulate(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Parallel = 1
	b, err := serverClient(2, 2).Simulate(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatalf("same seed, different reports:\n%s\n---\n%s", a, b)
	}
	opts.Seed = 43
	c, err := serverClient(2, 2).Simulate(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if a.String() == c.String() {
		t.Error("another seed gave the very same schedules")
	}
	// Replaying one schedule alone gives that schedule again.
	one, err := serverClient(2, 2).Simulate(t.Context(), Options{Schedules: 1, From: 5, Seed: 42, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(one.Schedules[0].Trace), fmt.Sprint(a.Schedules[5].Trace); got != want {
		t.Errorf("replayed schedule 5 differs:\n%s\n%s", got, want)
	}
}

// flipMeta and the two functions below are the oscillate pair: a sets x to
// not y, b copies x into y; there is no fixed point.
var (
	flipA = model.CharmMeta{Name: "flip-a", Provides: map[string]model.Endpoint{"flip": {Interface: "flip"}}}
	flipB = model.CharmMeta{Name: "flip-b", Requires: map[string]model.Endpoint{"flip": {Interface: "flip"}}}
)

func notY(u *charmapi.Universe) (*charmapi.Result, error) {
	res := charmapi.NewResult()
	rel := u.Relation("flip")
	x := "1"
	for _, m := range rel.Members() {
		if rel.Get(m, "y") == "1" {
			x = "0"
		}
	}
	res.Local(rel.Ident).Set("x", x)
	return res, nil
}

func copyX(u *charmapi.Universe) (*charmapi.Result, error) {
	res := charmapi.NewResult()
	rel := u.Relation("flip")
	y := "0"
	for _, m := range rel.Members() {
		if rel.Get(m, "x") == "1" {
			y = "1"
		}
	}
	res.Local(rel.Ident).Set("y", y)
	return res, nil
}

func TestSimulateFindsTheCycle(t *testing.T) {
	env := NewEnv("flip")
	env.DeployMeta("a", flipA)
	env.DeployMeta("b", flipB)
	env.Relate("a", "b")
	env.Hook("flip-a", Func(notY)).Hook("flip-b", Func(copyX)) // by charm name
	rep, err := env.Simulate(t.Context(), Options{Schedules: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || rep.Converged() != 0 {
		t.Fatalf("the flip pair converged:\n%s", rep)
	}
	for _, s := range rep.Schedules {
		if s.Cycle == nil {
			t.Fatalf("schedule %d: no cycle found\n%s", s.Index, rep)
		}
		var keys []string
		for _, k := range s.Cycle.Keys {
			keys = append(keys, k.Key+" by "+k.Writer)
		}
		if got := strings.Join(keys, "; "); got != "a/0 relations.flip:0.local.x by a/0; b/0 relations.flip:0.local.y by b/0" {
			t.Errorf("schedule %d: cycle keys %s", s.Index, got)
		}
		if !strings.Contains(s.Errors["a/0"], "diverged") || !strings.Contains(s.Errors["a/0"], "relations.flip:0.units.b/0.y (written by b/0)") {
			t.Errorf("schedule %d: a/0 error %q", s.Index, s.Errors["a/0"])
		}
	}
	out := rep.String()
	for _, want := range []string{"did not converge", "cycle: the settings after step", "keys that keep changing, and who writes them:",
		"a/0 relations.flip:0.local.x (written by a/0", "replay it with the whole trace: Options{Seed: 1, From: 0, Schedules: 1, Trace: true}", "FAIL"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestSimulateFindsNondeterminism(t *testing.T) {
	var n atomic.Int64
	counter := func(u *charmapi.Universe) (*charmapi.Result, error) {
		res := charmapi.NewResult()
		if peers := u.Relation("peers"); peers != nil {
			res.Local(peers.Ident).Set("n", fmt.Sprint(n.Add(1)))
		}
		return res, nil
	}
	env := NewEnv("counter")
	env.DeployMeta("server", serverMeta).Units(2)
	env.Hook("server", Func(counter))
	rep, err := env.Simulate(t.Context(), Options{Schedules: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || len(rep.Nondeterministic) != 2 {
		t.Fatalf("the counter passed:\n%s", rep)
	}
	nd := rep.Nondeterministic[0]
	if nd.Unit != "server/0" || len(nd.Diff) != 1 || nd.Diff[0].Key != "relations.peers:0.local.n" {
		t.Errorf("nondeterminism %+v", nd)
	}
	if s := rep.Schedules[0]; s.Converged || s.Cycle != nil || len(s.Churn) == 0 || s.Churn[0].Key != "server/0 relations.peers:0.local.n" && s.Churn[0].Key != "server/1 relations.peers:0.local.n" {
		t.Errorf("schedule 0: converged %v, cycle %v, churn %v", s.Converged, s.Cycle, s.Churn)
	}
	if !strings.Contains(rep.String(), "not a function of its universe") {
		t.Errorf("report:\n%s", rep)
	}
}

// sticky picks a primary among the peers that are ready and never changes
// its mind (it remembers the choice in its state): which peer it picks
// depends on who was ready first, so schedules disagree.
func sticky(u *charmapi.Universe) (*charmapi.Result, error) {
	res := charmapi.NewResult()
	peers := u.Relation("peers")
	res.Local(peers.Ident).Set("ready", "yes")
	if !u.Leader {
		return res, nil
	}
	primary := u.State["primary"]
	if primary == "" {
		if ready := peers.MembersWith("ready"); len(ready) > 0 {
			primary = ready[0]
		}
	}
	if primary != "" {
		res.PrivateState().Set("primary", primary)
		res.App(peers.Ident).Set("primary", primary)
	}
	return res, nil
}

func TestSimulateFindsDifferentFixedPoints(t *testing.T) {
	env := NewEnv("sticky")
	env.DeployMeta("server", serverMeta).Units(4)
	env.Hook("server", Func(sticky))
	rep, err := env.Simulate(t.Context(), Options{Schedules: 30, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || rep.Converged() != 30 || len(rep.FixedPoints) < 2 {
		t.Fatalf("want several fixed points:\n%s", rep)
	}
	out := rep.String()
	if !strings.Contains(out, "different fixed points") || !strings.Contains(out, "server relations.peers:0.app.primary") {
		t.Errorf("report:\n%s", out)
	}
}

func TestSimulateHookErrors(t *testing.T) {
	cases := map[string]struct {
		fn   ReconcileFunc
		want string
	}{
		"error": {func(u *charmapi.Universe) (*charmapi.Result, error) { return nil, errors.New("cannot reach backend") },
			"reconcile returned an error: cannot reach backend"},
		"panic": {func(u *charmapi.Universe) (*charmapi.Result, error) {
			var m map[string]string
			m["x"] = "y"
			return nil, nil
		},
			"reconcile panicked: assignment to entry in nil map"},
		"unknown relation": {func(u *charmapi.Universe) (*charmapi.Result, error) {
			res := charmapi.NewResult()
			res.Local("nosuch:9").Set("a", "b")
			return res, nil
		}, `relations.nosuch:9: client/1 is not in relation "nosuch:9"`},
		"app bag of a follower": {func(u *charmapi.Universe) (*charmapi.Result, error) {
			res := charmapi.NewResult()
			res.App(u.Relation("api").Ident).Set("a", "b")
			return res, nil
		}, "only the leader writes the application bag"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			env := NewEnv("broken")
			env.DeployMeta("server", serverMeta)
			env.DeployMeta("client", clientMeta).Units(2)
			env.Relate("client", "server")
			env.Hook("server", Func(server)).Hook("client", Func(c.fn))
			rep, err := env.Simulate(t.Context(), Options{Schedules: 3})
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() {
				t.Fatalf("passed:\n%s", rep)
			}
			msg := rep.Schedules[0].Errors["client/1"]
			if !strings.Contains(msg, c.want) {
				t.Errorf("client/1 error %q; want %q", msg, c.want)
			}
			if !strings.Contains(rep.String(), c.want) {
				t.Errorf("report does not say %q:\n%s", c.want, rep)
			}
		})
	}
}

func TestSimulateSetupErrors(t *testing.T) {
	env := NewEnv("x")
	env.DeployMeta("server", serverMeta)
	if _, err := env.Simulate(t.Context(), Options{}); err == nil || !strings.Contains(err.Error(), `register one with env.Hook("server"`) {
		t.Errorf("no hook: %v", err)
	}
	env = NewEnv("x")
	env.Deploy("server", t.TempDir())
	if _, err := env.Simulate(t.Context(), Options{}); err == nil || !strings.Contains(err.Error(), "service server") || !strings.Contains(err.Error(), "simdir.NewEnv") {
		t.Errorf("a charm directory in an Env that reads none: %v", err)
	}
	env = NewEnv("x")
	env.DeployMeta("server", serverMeta).Config("port", "eighty")
	env.Hook("server", Func(server))
	if _, err := env.Simulate(t.Context(), Options{}); err == nil || !strings.Contains(err.Error(), `option "port"`) {
		t.Errorf("bad config: %v", err)
	}
	env = NewEnv("x")
	env.DeployMeta("server", serverMeta)
	env.DeployMeta("client", clientMeta)
	env.Relate("client:nope", "server")
	env.Hook("server", Func(server)).Hook("client", Func(client))
	if _, err := env.Simulate(t.Context(), Options{}); err == nil || !strings.Contains(err.Error(), `no endpoint "nope"`) {
		t.Errorf("bad relation: %v", err)
	}
}

func TestSimulateMachinesAndFiles(t *testing.T) {
	// A hook that keeps a file in its unit directory: with File, every
	// unit has its own, even in-process.
	files := func(u *charmapi.Universe) (*charmapi.Result, error) {
		if err := os.WriteFile(u.File("unit.txt"), []byte(u.Unit), 0o600); err != nil {
			return nil, err
		}
		data, err := os.ReadFile(u.File("unit.txt"))
		if err != nil {
			return nil, err
		}
		res := charmapi.NewResult()
		res.Local(u.Relation("peers").Ident).Set("file", string(data)).Set("addr", u.Address)
		return res, nil
	}
	env := NewEnv("files")
	env.DeployMeta("server", serverMeta).Units(3)
	env.Hook("server", Func(files))
	rep := converges(t, env, Options{Schedules: 4, Machines: 3})
	final := rep.FixedPoints[0].Settings
	for i := range 3 {
		unit := fmt.Sprintf("server/%d", i)
		if got := final[unit+" relations.peers:0.local.file"]; got != unit {
			t.Errorf("%s read %q from its file", unit, got)
		}
		if got := final[unit+" relations.peers:0.local.addr"]; got != fmt.Sprintf("10.0.0.%d", i+1) {
			t.Errorf("%s address %q", unit, got)
		}
	}
	if _, err := os.Stat("unit.txt"); err == nil {
		t.Error("a unit wrote into the test's working directory")
	}
}

// converges simulates env and fails the test unless every schedule
// reaches the same fixed point (charmtest.Converges, without the import
// cycle).
func converges(t *testing.T, env *Env, opts Options) *Report {
	t.Helper()
	rep, err := env.Simulate(t.Context(), opts)
	if err != nil {
		t.Fatalf("simulate: %v", err)
	}
	if !rep.OK() {
		t.Fatalf("%s", rep)
	}
	return rep
}
