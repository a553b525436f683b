package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

func TestClusterWithAgentsSurvivesAgentAndLeaderLoss(t *testing.T) {
	t.Parallel()
	testClusterWithAgents(t, false)
}

func TestClusterWithAgentsOverTLS(t *testing.T) {
	t.Parallel()
	testClusterWithAgents(t, true)
}

func testClusterWithAgents(t *testing.T, withTLS bool) {
	if testing.Short() {
		t.Skip("starts five processes; skipped in -short")
	}
	c := startCluster(t, 3, withTLS, "--agent-ttl", "2s")
	m1 := c.agent("m1")
	c.waitMachines("m1")
	c.agent("m2")
	// Apply through a follower: writes reach the leader.
	if r := c.cli("apply", "-f", repo("testdata", "envs", "leader.cue"), "--yes", "--wait", "--timeout", "3m"); r.code != 0 {
		t.Fatalf("apply: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	st := c.status()
	if !st.Converged || st.Units["db/0"].Machine != "m1" || st.Units["db/1"].Machine != "m2" || !st.Units["db/0"].Leader {
		t.Fatalf("after apply: %s", jsonString(st))
	}
	// Kill m1's agent: its units go lost, db leadership moves to db/1,
	// the rest reconverges around it.
	m1.kill()
	rafttest.Eventually(t, 2*time.Minute, "leadership moved off the lost machine", func() error {
		st := c.status()
		return holds(st != nil && st.Converged && st.Units["db/0"].Agent == "lost" && st.Units["db/1"].Leader &&
			strings.HasPrefix(st.Units["db/1"].Status.Message, "primary"), jsonString(st))
	})
	// Kill the Raft leader meanwhile: a new one is elected, nothing
	// acknowledged is lost.
	li := c.waitLeader("a Raft leader", -1)
	c.sigkill(li)
	c.waitLeader("a new Raft leader", li)
	// The agent comes back with its data dir (its credential renews the
	// machine's registration) and catches up.
	c.agent("m1")
	rafttest.Eventually(t, 2*time.Minute, "m1 back, environment converged", func() error {
		st := c.status()
		return holds(st != nil && st.Converged && st.Units["db/0"].Agent == "" && st.Units["db/0"].Phase == engine.Settled &&
			len(st.Units) == 3 && st.Services["db"] != nil && st.Services["web"] != nil, jsonString(st))
	})
	// The killed server restarts from its data dir and catches up.
	c.restart(li)
	c.waitCaughtUp("the restarted node caught up")
	if r := c.cli("plan", "-f", repo("testdata", "envs", "leader.cue")); r.code != 0 {
		t.Fatalf("after all that the environment differs from what was applied: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A backup holds relation passwords: it is its owner's only, even
	// over a file that was world-readable.
	backup := filepath.Join(t.TempDir(), "backup.json")
	if err := os.WriteFile(backup, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := c.cli("cluster", "snapshot", "save", backup); r.code != 0 {
		t.Fatalf("snapshot save: %d\n%s", r.code, r.stderr)
	}
	if fi, err := os.Stat(backup); err != nil || fi.Mode().Perm() != 0o600 || fi.Size() == 0 {
		t.Errorf("backup: %v %v, want a non-empty file of mode 0600", fi, err)
	}
}
