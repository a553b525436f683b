package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

// TestRaftSurvivesLeaderLossRestartAndWipe is issue 3's process-level
// test: three real `fixpoint server` processes on 127.0.0.1. An
// environment applied through a follower survives a SIGKILL of the leader;
// a new leader takes new writes; the killed node restarts from its data
// dir and catches up; a node that lost its data dir rejoins under its old
// id without a second cluster appearing. No agents run: units stay
// pending, which is all the state needs to show.
func TestRaftSurvivesLeaderLossRestartAndWipe(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts three servers; skipped in -short")
	}
	c := startCluster(t, 3, false)
	envDir := t.TempDir()
	v1 := writeDemoEnv(t, envDir, "v1.cue", 2, 200)
	v2 := writeDemoEnv(t, envDir, "v2.cue", 3, 300)

	// Apply through a follower, and nothing else: the follower forwards.
	fi := (c.waitLeader("a leader", -1) + 1) % 3
	r := c.cliAt(c.addrs[fi], "apply", "-f", v1, "--yes")
	if r.code != 0 {
		t.Fatalf("apply through follower n%d: %d\n%s\n%s", fi+1, r.code, r.stdout, r.stderr)
	}
	appliedAt := appliedIndex(t, r.stdout)
	before := c.state(c.addrs[fi], false)
	if before.EnvIndex != appliedAt || len(before.Services) != 2 || len(before.Units) != 4 {
		t.Fatalf("after apply at index %d through n%d, a linearizable read there shows env_index %d, %d services, %d units",
			appliedAt, fi+1, before.EnvIndex, len(before.Services), len(before.Units))
	}

	// SIGKILL the leader.
	killed := c.waitLeader("a leader before the kill", -1)
	c.sigkill(killed)
	t.Logf("killed leader n%d", killed+1)
	nl := c.waitLeader("a new leader among the survivors", killed)
	t.Logf("new leader n%d", nl+1)

	// Every acknowledged write is still there, on every survivor.
	for i := range c.addrs {
		if i == killed {
			continue
		}
		after := c.state(c.addrs[i], false)
		sameEnvironment(t, fmt.Sprintf("n%d after the leader's death", i+1), before, after)
	}

	// New writes are accepted: a changed environment, applied through
	// whichever survivor answers.
	r = c.cli("apply", "-f", v2, "--yes")
	if r.code != 0 {
		t.Fatalf("apply v2 after the leader's death: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	v2At := appliedIndex(t, r.stdout)
	want := c.state(c.live(), false)
	if want.EnvIndex != v2At || want.Services["web"].Units != 3 || want.Services["db"].Config["max_connections"] != float64(300) || len(want.Units) != 5 {
		t.Fatalf("v2 applied at %d but the state says env_index %d, web units %d, db config %v, %d units",
			v2At, want.EnvIndex, want.Services["web"].Units, want.Services["db"].Config, len(want.Units))
	}

	// The killed node restarts from its data dir (on a new Raft port:
	// the cluster learns it) and catches up.
	c.restart(killed)
	c.waitAgree("the restarted node caught up", 3)
	sameEnvironment(t, fmt.Sprintf("restarted n%d", killed+1), want, c.state(c.addrs[killed], true))

	// A follower loses its data dir and comes back with --join and the
	// token: it rejoins as the same id, no second cluster appears.
	wiped := (c.waitLeader("a leader before the wipe", -1) + 1) % 3
	c.sigkill(wiped)
	if err := os.RemoveAll(c.dirs[wiped]); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(c.dirs[wiped], 0o700); err != nil {
		t.Fatal(err)
	}
	c.restart(wiped, "--join", c.live())
	c.waitAgree("the wiped node rejoined and caught up", 3)
	sameEnvironment(t, fmt.Sprintf("wiped n%d", wiped+1), want, c.state(c.addrs[wiped], true))
	// The cluster takes writes again, and a linearizable read on the
	// wiped node sees them. (The write goes through another node: a wiped
	// node has no charm archives, and POST /v1/deploy refuses charms it
	// does not hold locally, even ones the state already knows.)
	r = c.cliAt(c.addrs[(wiped+1)%3], "apply", "-f", v1, "--yes")
	if r.code != 0 {
		t.Fatalf("apply v1 after the wipe: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if st := c.state(c.addrs[wiped], false); st.EnvIndex != appliedIndex(t, r.stdout) || st.Services["web"].Units != 2 {
		t.Fatalf("the wiped node's linearizable read after its own write: env_index %d, web units %d", st.EnvIndex, st.Services["web"].Units)
	}
	c.waitAgree("all three agree at the end", 3)
}

// writeDemoEnv writes the demo environment with absolute charm paths, web
// scaled to webUnits and db's max_connections set, and returns its path.
func writeDemoEnv(t *testing.T, dir, name string, webUnits, maxConn int) string {
	t.Helper()
	src := fmt.Sprintf(`apiVersion: "fixpoint/v1"
name:       "shop"
services: {
	db: {charm: %q, units: 2, config: {max_connections: %d}}
	web: {charm: %q, units: %d}
}
relations: "web-db": ["web:db", "db:db"]
`, repo("testdata", "charms", "db"), maxConn, repo("testdata", "charms", "web"), webUnits)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var appliedRE = regexp.MustCompile(`applied at index (\d+)`)

// appliedIndex is the index `apply` says it applied at.
func appliedIndex(t *testing.T, out string) uint64 {
	t.Helper()
	m := appliedRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("apply did not say where it applied:\n%s", out)
	}
	i, _ := strconv.ParseUint(m[1], 10, 64)
	return i
}

// sameEnvironment fails unless got holds what want holds: the environment
// index, services, units, relations and charms, unchanged.
func sameEnvironment(t *testing.T, who string, want, got *model.State) {
	t.Helper()
	if got.Index < want.EnvIndex || got.EnvIndex != want.EnvIndex {
		t.Fatalf("%s: index %d, env_index %d; want env_index %d", who, got.Index, got.EnvIndex, want.EnvIndex)
	}
	parts := map[string][2]any{
		"services":  {want.Services, got.Services},
		"units":     {want.Units, got.Units},
		"relations": {want.Relations, got.Relations},
		"charms":    {want.Charms, got.Charms},
	}
	for what, p := range parts {
		if !reflect.DeepEqual(p[0], p[1]) {
			t.Fatalf("%s: %s differ from what was acknowledged:\n got %s\nwant %s", who, what, jsonString(p[1]), jsonString(p[0]))
		}
	}
}
