package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var charmHashRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// TestCharmInitTestPackUp is the charm author's path: a new charm from the
// template passes its own tests, `charm test`, packs reproducibly and
// deploys with up. It is made inside this module (testdata is skipped by
// ./...) as --in-module asks, so it builds against this checkout's charmapi.
func TestCharmInitTestPackUp(t *testing.T) {
	t.Parallel()
	parent, err := os.MkdirTemp(repo("testdata"), "charm-init-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	r := fixpoint(t, time.Minute, "charm", "init", "hello", "--dir", parent, "--in-module")
	if r.code != 0 {
		t.Fatalf("init exited %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	dir := filepath.Join(parent, "hello")
	for _, f := range []string{"charm.cue", "src/main.go", "src/reconcile.go", "src/reconcile_test.go"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("init did not write %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
		t.Error("init wrote a go.mod inside the fixpoint module")
	}
	if !strings.Contains(r.stdout, "fixpoint charm test") {
		t.Errorf("init does not say what to do next:\n%s", r.stdout)
	}
	if r := fixpoint(t, time.Minute, "charm", "init", "hello", "--dir", parent, "--in-module"); r.code != exitFailed || !strings.Contains(r.stderr, "already exists") {
		t.Errorf("init over an existing charm: %d %s", r.code, r.stderr)
	}

	// The template's own tests, written with charmtest.
	gotest := exec.CommandContext(t.Context(), "go", "test", "-count=1", ".")
	gotest.Dir = filepath.Join(dir, "src")
	if out, err := gotest.CombinedOutput(); err != nil {
		t.Fatalf("go test in the new charm: %v\n%s", err, out)
	}

	r = fixpoint(t, 3*time.Minute, "charm", "test", dir, "--schedules", "8")
	if r.code != 0 || !strings.Contains(r.stdout, "converged: 8 of 8 schedules, all to the same fixed point") || !strings.HasSuffix(r.stdout, "OK\n") {
		t.Fatalf("charm test exited %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	r = fixpoint(t, 2*time.Minute, "charm", "pack", "-q", dir)
	hash := strings.TrimSpace(r.stdout)
	if r.code != 0 || !charmHashRE.MatchString(hash) {
		t.Fatalf("pack -q exited %d: %q %s", r.code, r.stdout, r.stderr)
	}
	r = fixpoint(t, 2*time.Minute, "charm", "pack", dir, "--output", filepath.Join(t.TempDir(), "hello.charm"))
	if r.code != 0 || !strings.Contains(r.stdout, "hash       "+hash+"\n") || !strings.Contains(r.stdout, "built from src/") ||
		!strings.Contains(r.stdout, "provides website (http)") || !strings.Contains(r.stdout, "port (int, default 8080)") {
		t.Fatalf("second pack (same hash expected):\n%s\n%s", r.stdout, r.stderr)
	}

	env := filepath.Join(parent, "env.cue")
	if err := os.WriteFile(env, []byte(`apiVersion: "fixpoint/v1"
name:       "hello"
services: hello: {charm: "./hello", units: 2, config: greeting: "hi"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = fixpoint(t, 5*time.Minute, "up", "-f", env, "--data-dir", t.TempDir(), "--until-converged", "--timeout", "4m")
	if r.code != 0 {
		t.Fatalf("up exited %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if n := strings.Count(r.stdout, "hi from 2 unit(s) on port 8080"); n < 2 {
		t.Errorf("up did not settle both units as the simulation did:\n%s", r.stdout)
	}
}

// TestCharmInitOwnModule makes a charm outside any module: it gets a
// go.mod that points at this checkout, and works offline: GOPROXY=off and
// no checksum database, the checkout's go.sum seeding the charm's.
func TestCharmInitOwnModule(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("resolves the new module's dependencies")
	}
	work := t.TempDir()
	offline := []string{"GOPROXY=off", "GOFLAGS=-mod=mod", "GOSUMDB=sum.golang.org", "GONOSUMDB=", "GOPRIVATE="}
	r := runFixpoint(t, 2*time.Minute, work, offline, "charm", "init", "solo", "--replace", repo())
	if r.code != 0 {
		t.Fatalf("init exited %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	gomod, err := os.ReadFile(filepath.Join(work, "solo", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"module solo\n", "require github.com/fixpoint/fixpoint ", "replace github.com/fixpoint/fixpoint => " + repo()} {
		if !strings.Contains(string(gomod), want) {
			t.Errorf("go.mod lacks %q:\n%s", want, gomod)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "solo", "go.sum")); err != nil {
		t.Errorf("no go.sum: %v\n%s", err, r.stdout)
	}
	r = runFixpoint(t, 3*time.Minute, work, offline, "charm", "test", "solo", "--schedules", "3", "--units", "3")
	if r.code != 0 {
		t.Fatalf("charm test exited %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// Without --replace, outside any checkout, a development build (as
	// go install leaves one) builds against the checkout it came from.
	r = runFixpoint(t, 2*time.Minute, work, offline, "charm", "init", "other")
	if r.code != 0 || strings.Contains(r.stdout, "warning") {
		t.Fatalf("init without --replace: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if gomod, _ := os.ReadFile(filepath.Join(work, "other", "go.mod")); !strings.Contains(string(gomod), "replace github.com/fixpoint/fixpoint => "+filepath.Clean(repo())) {
		t.Errorf("go.mod without --replace:\n%s", gomod)
	}
}

// TestCharmInitInCheckoutIsItsOwnModule: inside fixpoint's checkout a
// new charm is not made a package of fixpoint unless --in-module says so.
func TestCharmInitInCheckoutIsItsOwnModule(t *testing.T) {
	if testing.Short() {
		t.Skip("resolves the new module's dependencies")
	}
	parent, err := os.MkdirTemp(repo("testdata"), "charm-init-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	r := runFixpoint(t, 2*time.Minute, parent, []string{"GOPROXY=off", "GOFLAGS=-mod=mod"}, "charm", "init", "inner")
	if r.code != 0 {
		t.Fatalf("init exited %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	gomod, err := os.ReadFile(filepath.Join(parent, "inner", "go.mod"))
	if err != nil || !strings.Contains(string(gomod), "module inner\n") || !strings.Contains(string(gomod), "replace github.com/fixpoint/fixpoint => "+filepath.Clean(repo())) {
		t.Errorf("charm inside the checkout without --in-module: %v\n%s", err, gomod)
	}
	r = fixpoint(t, time.Minute, "charm", "init", "x", "--dir", t.TempDir(), "--in-module")
	if r.code != exitFailed || !strings.Contains(r.stderr, "not inside a fixpoint checkout") {
		t.Errorf("--in-module outside a checkout: %d %s", r.code, r.stderr)
	}
}

func TestCharmInitRejectsBadNames(t *testing.T) {
	r := fixpoint(t, time.Minute, "charm", "init", "My_Charm", "--dir", t.TempDir())
	if r.code != exitFailed || !strings.Contains(r.stderr, `charm name "My_Charm" is invalid`) {
		t.Errorf("%d %s", r.code, r.stderr)
	}
}

func TestCharmTestFindsTheOscillation(t *testing.T) {
	t.Parallel()
	r := fixpoint(t, 3*time.Minute, "charm", "test", "-f", repo("testdata", "envs", "oscillate.cue"), "--schedules", "4")
	if r.code != exitUnitErr {
		t.Fatalf("exited %d, want %d\n%s\n%s", r.code, exitUnitErr, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"converged: 0 of 4 schedules",
		"cycle: the settings after step",
		"oscillate-a/0 relations.flip:0.local.x (written by oscillate-a/0",
		"oscillate-b/0 relations.flip:0.local.y (written by oscillate-b/0",
		"diverged: reconciled 33 times",
		"--seed 1 --schedule 0",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "4 of 4 schedule(s) did not converge") {
		t.Errorf("stderr: %s", r.stderr)
	}

	// Replaying one schedule prints its whole trace.
	r = fixpoint(t, 3*time.Minute, "charm", "test", "-f", repo("testdata", "envs", "oscillate.cue"), "--seed", "1", "--schedule", "2")
	if r.code != exitUnitErr || !strings.Contains(r.stdout, "trace of schedule #2 (random):") || !strings.Contains(r.stdout, "step 1: results of") {
		t.Errorf("replay exited %d:\n%s", r.code, r.stdout)
	}
}

func TestCharmTestFindsTheClock(t *testing.T) {
	t.Parallel()
	r := fixpoint(t, 3*time.Minute, "charm", "test", "-f", repo("testdata", "envs", "clock.cue"), "--schedules", "2")
	if r.code != exitUnitErr {
		t.Fatalf("exited %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"not a function of its universe", "clock/0 returned different results for the same universe",
		"relations.ring:0.local.now", "no timestamps", "clock/0 relations.ring:0.local.now (written by clock/0"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestCharmTestDemoCharms(t *testing.T) {
	t.Parallel()
	r := fixpoint(t, 3*time.Minute, "charm", "test", repo("testdata", "charms", "db"), repo("testdata", "charms", "web"), "--schedules", "6", "--units", "3")
	if r.code != 0 {
		t.Fatalf("exited %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{`"db-web": ["db:db", "web:db"]`, "units: 3", "6 unit(s)", "converged: 6 of 6 schedules, all to the same fixed point"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	// A charm the environment does not deploy is refused.
	r = fixpoint(t, time.Minute, "charm", "test", "-f", repo("testdata", "demo", "env.cue"), repo("testdata", "charms", "clock"))
	if r.code != exitFailed || !strings.Contains(r.stderr, "is not deployed by the environment") {
		t.Errorf("exited %d: %s", r.code, r.stderr)
	}
}

// TestCharmTestOldHooks simulates the classic charms: their old hooks run
// through the adapter, with this binary as their hook tools.
func TestCharmTestOldHooks(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("old hooks are slow to run")
	}
	r := fixpoint(t, 5*time.Minute, "charm", "test", "-f", repo("testdata", "classic", "env.cue"), "--schedules", "2")
	if r.code != 0 || !strings.Contains(r.stdout, "converged: 2 of 2 schedules") {
		t.Fatalf("exited %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestCharmPackReportsBadMetadata(t *testing.T) {
	r := fixpoint(t, time.Minute, "charm", "pack", repo("testdata", "broken", "charm-bad-option-type", "charms", "app"))
	if r.code != exitFailed || !strings.Contains(r.stderr, `charm.cue:2:31: config.options.port.type: option type must be "string", "int", "float", "boolean" or "secret"`) {
		t.Errorf("exited %d: %s", r.code, r.stderr)
	}
	r = fixpoint(t, time.Minute, "charm", "pack", t.TempDir())
	if r.code != exitFailed || !strings.Contains(r.stderr, "not a charm") {
		t.Errorf("exited %d: %s", r.code, r.stderr)
	}
}

// TestCharmTestExpectations: charm test prints each unit's final status;
// an environment whose expect: the fixed point meets passes, one it
// misses exits 6 naming the unit, what it ended with and what was
// expected; an expect: of a service not declared is bad input at its
// file:line:col.
func TestCharmTestExpectations(t *testing.T) {
	demo := func(expect string) string {
		return writeDemoVariant(t, "env.cue", `services: {
	db: {charm: "CHARMS/db", units: 1}
	web: {charm: "CHARMS/web", units: 1}
}
relations: "web-db": ["web:db", "db:db"]
`+expect)
	}
	r := fixpoint(t, 3*time.Minute, "charm", "test", "-f", demo(`expect: web: status: "active"`), "--schedules", "2")
	if r.code != exitOK || !strings.Contains(r.stdout, "final status at the fixed point:") || !strings.Contains(r.stdout, "web/0  active: connected to") || !strings.Contains(r.stdout, "expectations met") {
		t.Fatalf("met expectation: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = fixpoint(t, 3*time.Minute, "charm", "test", "-f", demo(`expect: {web: status: "active", db: {status: "active", message: "primary, 9 clients"}}`), "--schedules", "2")
	if r.code != exitUnmet || !strings.Contains(r.stdout, `db/0 ends active: primary, 1 client; expected active: primary, 9 clients`) || strings.Contains(r.stdout, "web/0 ends") || !strings.Contains(r.stderr, "1 unit(s) end with another status") {
		t.Fatalf("unmet expectation: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = fixpoint(t, time.Minute, "charm", "test", "-f", demo(`expect: cache: status: "active"`))
	if r.code != exitFailed || !strings.Contains(r.stderr, "env.cue:8:9:") || !strings.Contains(r.stderr, "expect.cache: no service cache") {
		t.Fatalf("expectation of an unknown service: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
