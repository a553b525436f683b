package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fixpoint/fixpoint/bench/internal/proc"
	"github.com/fixpoint/fixpoint/bench/internal/servers"
)

var (
	// withRestart (-restart) restarts a follower at the fixed point and
	// times its catching up; withJoin (-join) adds a fourth node, joinID.
	withRestart, withJoin bool
)

// joinID is the node -join adds.
const joinID = "n4"

// rejoin runs -restart, then -join, on the cluster at its fixed point and
// puts their figures in sum; a failure is reported and its seconds are -1.
func rejoin(sum *summary, cl *servers.Cluster, timeout time.Duration) {
	if withRestart {
		sum.RestartSeconds = -1
		if err := restart(sum, cl, timeout); err != nil {
			fmt.Fprintln(os.Stderr, "scale: -restart:", err)
			printLogs(cl)
		}
	}
	if withJoin {
		sum.JoinSeconds = -1
		if err := join(sum, cl, timeout); err != nil {
			fmt.Fprintln(os.Stderr, "scale: -join:", err)
			printLogs(cl)
		}
	}
}

// restart stops a follower with SIGTERM and starts it again on its data
// dir, and times it from its start until it has applied what the leader
// had then and answers a stale read of the state at that index. It takes
// a snapshot first, so that the node restores it and then the log after
// it, as a node restarted after running a while does.
func restart(sum *summary, cl *servers.Cluster, timeout time.Duration) error {
	f, err := cl.Pick("follower")
	if err != nil {
		return err
	}
	snap, err := cl.Snapshot(f)
	if err != nil {
		return err
	}
	if err := cl.Restart(f); err != nil {
		return err
	}
	serving := time.Since(f.Started)
	to, err := leaderMark(cl)
	if err != nil {
		return err
	}
	if err := cl.WaitCaughtUp(f, to, timeout); err != nil {
		return err
	}
	sum.RestartSeconds = time.Since(f.Started).Seconds()
	sum.RestartRSSMiB = proc.PeakRSS(f.Cmd.Process.Pid)
	fmt.Printf("restart %s: at the leader's index %d (its snapshot at %d, then the log) in %.1f s (serving in %.1f s), peak RSS %.0f MiB\n",
		f.ID, to.Applied, snap, sum.RestartSeconds, serving.Seconds(), sum.RestartRSSMiB)
	return nil
}

// join starts a fourth server with --join and times it from its start
// until it is a voter that has applied what the leader had when it
// started and answers a stale read of the state at that index. The
// leader takes a snapshot first, to send the new node rather than its
// whole log.
func join(sum *summary, cl *servers.Cluster, timeout time.Duration) error {
	leader, err := cl.Pick("leader")
	if err != nil {
		return err
	}
	if _, err := cl.Snapshot(leader); err != nil {
		return err
	}
	to, err := cl.Mark(leader)
	if err != nil {
		return err
	}
	n, err := cl.Add(joinID)
	if err != nil {
		return err
	}
	serving := time.Since(n.Started)
	if err := cl.WaitCaughtUp(n, to, timeout); err != nil {
		return err
	}
	sum.JoinSeconds = time.Since(n.Started).Seconds()
	sum.JoinRSSMiB = proc.PeakRSS(n.Cmd.Process.Pid)
	// Raft keeps a snapshot that it installed from the leader; a node
	// that was sent the log alone has none this early.
	from := "the log"
	if snaps, _ := filepath.Glob(filepath.Join(n.Dir, "raft", "snapshots", "*", "state.bin")); len(snaps) > 0 {
		from, sum.JoinSnapshot = "the leader's snapshot", true
	}
	fmt.Printf("join %s: a voter at the leader's index %d, from %s, in %.1f s (serving in %.1f s), peak RSS %.0f MiB\n",
		n.ID, to.Applied, from, sum.JoinSeconds, serving.Seconds(), sum.JoinRSSMiB)
	return nil
}

// leaderMark is how far the leader has come.
func leaderMark(cl *servers.Cluster) (servers.Mark, error) {
	leader, err := cl.Pick("leader")
	if err != nil {
		return servers.Mark{}, err
	}
	return cl.Mark(leader)
}

// printLogs writes the end of what the servers logged (errors only) to
// stderr, when something failed: their directory goes with the run.
func printLogs(cl *servers.Cluster) {
	for _, s := range cl.Servers {
		if b, err := os.ReadFile(s.Log.Name()); err == nil && len(b) > 0 {
			fmt.Fprintf(os.Stderr, "%s logged:\n%s\n", s.ID, proc.Tail(string(b), 4000))
		}
	}
}
