package charmtest_test

// The demo charms under testdata/charms, tested with the kit as an author
// would: their packed hooks run as processes on built universes, the demo
// environments are simulated under many schedules, and the kit-based tests
// next to their sources (testdata/charms/*/src/*_test.go, which `go test
// ./...` does not reach) are run from here.

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi/charmtest"
	"github.com/fixpoint/fixpoint/charmapi/charmtest/charmdir"
)

// repo returns a path inside the repository.
func repo(parts ...string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(append([]string{filepath.Dir(file), "..", ".."}, parts...)...)
}

func TestDemoDBHook(t *testing.T) {
	db := charmdir.Charm(t, repo("testdata", "charms", "db"))
	b := charmtest.NewUniverse("db/0").Leader().Address("10.0.0.1").Config("port", 6379)
	b.Provides("db", "web").Interface("kv").Unit("web/0", "database", "shop").Unit("web/1")
	b.Peer("cluster").Unit("db/1", "address", "10.0.0.2")
	res := charmtest.Run(t, db, b.Universe())
	res.ExpectRelations("db:0", "cluster:1").
		ExpectLocalKey("db:0", "allowed-units", "web/0").
		ExpectLocalKey("db:0", "host", "10.0.0.1").
		ExpectApp("cluster:1", map[string]string{"primary": "db/0"}).
		ExpectStatus("active", "primary, 1 client")
}

func TestDemoWebHook(t *testing.T) {
	web := charmdir.Charm(t, repo("testdata", "charms", "web"))
	b := charmtest.NewUniverse("web/0").Config("database", "shop")
	db := b.Requires("db", "db").Unit("db/0", "host", "10.0.0.1")
	charmtest.Run(t, web, b.Universe()).
		ExpectLocal("db:0", map[string]string{"database": "shop"}).
		ExpectStatus("waiting", "waiting for db access")

	db.Unit("db/0", "port", "6379", "user", "web", "password", "pw", "database", "shop", "allowed-units", "web/0")
	res := charmtest.Run(t, web, b.Universe()).ExpectStatus("active", "connected to 10.0.0.1:6379 db shop as web")
	conf, err := os.ReadFile(filepath.Join(res.Dir, "web.conf"))
	if err != nil || !strings.Contains(string(conf), "password=pw\n") {
		t.Errorf("web.conf in the unit directory: %q (%v)", conf, err)
	}
}

func TestDemoEnvironmentConverges(t *testing.T) {
	env, err := charmdir.LoadEnv(repo("testdata", "demo", "env.cue"))
	if err != nil {
		t.Fatal(err)
	}
	rep := charmtest.Converges(t, env, charmtest.SimOptions{Schedules: 12, Seed: 1})
	final := rep.FixedPoints[0].Settings
	for key, want := range map[string]string{
		"db/1 relations.db:1.local.allowed-units": "web/0 web/1",
		"db relations.cluster:0.app.primary":      "db/0",
		"web/0 status":                            "active: connected to 127.0.0.1:6379 db shop as web",
		"db/1 status":                             "active: replica of db/0, 2 clients",
	} {
		if final[key] != want {
			t.Errorf("%s = %q; want %q", key, final[key], want)
		}
	}
}

func TestOscillatingPairIsCaught(t *testing.T) {
	env, err := charmdir.LoadEnv(repo("testdata", "envs", "oscillate.cue"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := env.Simulate(t.Context(), charmtest.SimOptions{Schedules: 6, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || rep.Converged() != 0 {
		t.Fatalf("the oscillating pair passed:\n%s", rep)
	}
	for _, s := range rep.Schedules {
		if s.Cycle == nil || len(s.Cycle.Keys) != 2 {
			t.Fatalf("schedule %d: cycle %+v\n%s", s.Index, s.Cycle, rep)
		}
		for i, want := range []string{"oscillate-a/0 relations.flip:0.local.x", "oscillate-b/0 relations.flip:0.local.y"} {
			if k := s.Cycle.Keys[i]; k.Key != want || k.Writer != want[:strings.IndexByte(want, ' ')] {
				t.Errorf("schedule %d: key %d is %+v; want %s", s.Index, i, k, want)
			}
		}
		if !strings.Contains(s.Errors["oscillate-a/0"], "diverged") {
			t.Errorf("schedule %d: oscillate-a/0 error %q", s.Index, s.Errors["oscillate-a/0"])
		}
	}
	out := rep.String()
	for _, want := range []string{"keys that keep changing, and who writes them:",
		"oscillate-a/0 relations.flip:0.local.x (written by oscillate-a/0",
		"oscillate-b/0 relations.flip:0.local.y (written by oscillate-b/0"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestClockIsCaught(t *testing.T) {
	env, err := charmdir.LoadEnv(repo("testdata", "envs", "clock.cue"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := env.Simulate(t.Context(), charmtest.SimOptions{Schedules: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || rep.Converged() != 0 || len(rep.Nondeterministic) != 2 {
		t.Fatalf("the clock passed:\n%s", rep)
	}
	for _, n := range rep.Nondeterministic {
		if len(n.Diff) != 1 || n.Diff[0].Key != "relations.ring:0.local.now" {
			t.Errorf("%s: %+v", n.Unit, n.Diff)
		}
	}
	s := rep.Schedules[0]
	if s.Cycle != nil || len(s.Churn) != 2 || !strings.HasSuffix(s.Churn[0].Key, "relations.ring:0.local.now") {
		t.Errorf("schedule 0: cycle %+v churn %+v", s.Cycle, s.Churn)
	}
	if out := rep.String(); !strings.Contains(out, "not a function of its universe") || !strings.Contains(out, "no timestamps") {
		t.Errorf("report:\n%s", out)
	}
}

// TestCharmSourceTests runs the kit-based tests that live next to the demo
// charms' sources.
func TestCharmSourceTests(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test on the demo charms")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	args := []string{"test"}
	for _, c := range []string{"db", "web", "oscillate-a", "oscillate-b", "clock"} {
		args = append(args, "./testdata/charms/"+c+"/src")
	}
	cmd := exec.CommandContext(t.Context(), goTool, args...)
	cmd.Dir = repo()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("%s", out)
}
