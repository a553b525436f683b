package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// TestClusterOutcomesNeverLie: with m1's agent killed, wait does not
// exit 0 but 5, and status names m1 and the units waiting on it; with a
// control-plane node killed, status says so under its first line and
// cluster members gives the node's real last contact, not "0s".
func TestClusterOutcomesNeverLie(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts five processes; skipped in -short")
	}
	c := startCluster(t, 3, false, "--agent-ttl", "2s")
	m1 := c.agent("m1")
	c.agent("m2")
	c.waitMachines("m1", "m2")
	if r := c.cli("apply", "-f", repo("testdata", "envs", "leader.cue"), "--yes", "--wait", "--timeout", "3m"); r.code != exitOK {
		t.Fatalf("apply: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	m1.kill()
	rafttest.Eventually(t, 2*time.Minute, "m1 lost", func() error {
		st := c.status()
		return holds(st != nil && st.Machines["m1"].State == "lost", jsonString(st))
	})
	r := c.cli("wait", "--timeout", "2m")
	if r.code != exitLost || !strings.Contains(r.stderr, "fixed point except units on lost machines: machine m1 lost; waiting on it: db/0") {
		t.Fatalf("wait with m1 lost exited %d, want %d:\n%s\n%s", r.code, exitLost, r.stdout, r.stderr)
	}
	r = c.cli("status")
	if lines := strings.Split(r.stdout, "\n"); len(lines) < 2 || lines[1] != "machine m1 lost; waiting on it: db/0" {
		t.Fatalf("status with m1 lost:\n%s", r.stdout)
	}
	st := c.status()
	if len(st.LostMachines) != 1 || st.LostMachines[0].Machine != "m1" || strings.Join(st.LostMachines[0].Units, ",") != "db/0" {
		t.Fatalf("status JSON lost_machines: %s", jsonString(st.LostMachines))
	}

	// A follower's server killed: its last contact is the leader's
	// account, and it grows.
	gi := (c.waitLeader("a Raft leader", -1) + 1) % 3
	gone := nodeID(gi)
	c.sigkill(gi)
	killed := time.Now()
	rafttest.Eventually(t, 2*time.Minute, gone+" not answering in status and members", func() error {
		if st := c.status(); st == nil || len(st.UnreachableNodes) != 1 || st.UnreachableNodes[0].ID != gone {
			return errors.New("status does not name it unreachable")
		}
		ms := c.members()
		for _, m := range ms {
			if m.ID == gone {
				since := time.Since(killed)
				return holds(m.Unreachable && since > 3*time.Second && m.LastContact > since-2*time.Second, jsonString(ms))
			}
		}
		return fmt.Errorf("no %s: %s", gone, jsonString(ms))
	})
	if r := c.cli("status"); !strings.Contains(r.stdout, "\ncontrol-plane node "+gone+" not answering; last contact ") {
		t.Errorf("status with %s killed:\n%s%s", gone, r.stdout, r.stderr)
	}
	r = c.cli("cluster", "members")
	if !strings.Contains(r.stdout, "ago, not answering") {
		t.Errorf("cluster members with %s killed:\n%s", gone, r.stdout)
	}
	st = c.status()
	if len(st.UnreachableNodes) != 1 || st.UnreachableNodes[0].ID != gone || time.Since(st.UnreachableNodes[0].LastSeen) < 3*time.Second {
		t.Errorf("status JSON unreachable_nodes: %s", jsonString(st.UnreachableNodes))
	}
}
