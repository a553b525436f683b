package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/raftstore"
)

// TestClusterOutcomesNeverLie: with m1's agent killed, wait does not
// exit 0 but 5, and status names m1 and the units waiting on it; with a
// control-plane node killed, status says so under its first line and
// cluster members gives the node's real last contact, not "0s".
func TestClusterOutcomesNeverLie(t *testing.T) {
	if testing.Short() {
		t.Skip("starts five processes; skipped in -short")
	}
	c := startCluster(t, false) // --agent-ttl 2s
	m1 := c.agent("m1")
	c.agent("m2")
	eventually(t, "m1 and m2 registered", time.Minute, func() (bool, string) {
		st := c.status()
		return st != nil && st.Machines["m1"] != nil && st.Machines["m2"] != nil, m1.out.String()
	})
	if r := c.cli("apply", "-f", repo("testdata", "envs", "leader.cue"), "--yes", "--wait", "--timeout", "3m"); r.code != exitOK {
		t.Fatalf("apply: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	_ = m1.cmd.Process.Signal(syscall.SIGKILL)
	_ = m1.cmd.Wait()
	eventually(t, "m1 lost", 2*time.Minute, func() (bool, string) {
		st := c.status()
		return st != nil && st.Machines["m1"].State == "lost", jsonString(st)
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
	li := c.leader()
	if li < 0 {
		t.Fatal("no Raft leader")
	}
	gi := (li + 1) % 3
	gone := fmt.Sprintf("n%d", gi+1)
	_ = c.procs[gi].cmd.Process.Signal(syscall.SIGKILL)
	_ = c.procs[gi].cmd.Wait()
	killed := time.Now()
	eventually(t, gone+" not answering in status and members", 2*time.Minute, func() (bool, string) {
		r := c.cli("status")
		if !strings.Contains(r.stdout, "\ncontrol-plane node "+gone+" not answering; last contact ") {
			return false, r.stdout + r.stderr
		}
		r = c.cli("cluster", "members", "--format", "json")
		var ms []raftstore.Member
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &ms) != nil {
			return false, r.stdout + r.stderr
		}
		for _, m := range ms {
			if m.ID == gone {
				since := time.Since(killed)
				return m.Unreachable && since > 3*time.Second && m.LastContact > since-2*time.Second, r.stdout
			}
		}
		return false, r.stdout
	})
	r = c.cli("cluster", "members")
	if !strings.Contains(r.stdout, "ago, not answering") {
		t.Errorf("cluster members with %s killed:\n%s", gone, r.stdout)
	}
	st = c.status()
	if len(st.UnreachableNodes) != 1 || st.UnreachableNodes[0].ID != gone || time.Since(st.UnreachableNodes[0].LastSeen) < 3*time.Second {
		t.Errorf("status JSON unreachable_nodes: %s", jsonString(st.UnreachableNodes))
	}
}
