package raftstore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// TestTheLogsBytesMakeASnapshotDue: with entries far fewer than raft's
// counts ask for, the log's bytes alone make every node snapshot and
// compact, keeping about the trailing bytes' worth of entries; a node
// joining then gets the snapshot, not the whole log, and holds every
// acknowledged write.
func TestTheLogsBytesMakeASnapshotDue(t *testing.T) {
	log := testLogger(t)
	ctx := ctxT(t, 2*time.Minute)
	nodes := make([]*node, 3)
	for i := range nodes {
		nodes[i] = newNode(t, log, fmt.Sprintf("n%d", i+1))
		nodes[i].segment, nodes[i].snapBytes, nodes[i].trailBytes = 1<<10, 16<<10, 2<<10
	}
	nodes[0].start(true, nil)
	nodes[1].start(false, []string{nodes[0].httpAddr})
	nodes[2].start(false, []string{nodes[0].httpAddr})
	rafttest.Eventually(t, time.Minute, "three voters", func() error { return voters(nodes, 3) })
	leader := waitLeader(t, nodes...)
	// Each entry carries a host name of a few hundred bytes: the writes
	// hold several times the floor, in a few hundred entries, far below
	// raft's own threshold of entries.
	pad := strings.TrimSuffix(strings.Repeat(strings.Repeat("a", 60)+".", 4), ".")
	const writes = 200
	for i := range writes {
		if _, err := leader.s.Apply(ctx, machineCmd(fmt.Sprintf("m%d", i), pad)); err != nil {
			t.Fatalf("apply m%d: %v", i, err)
		}
	}
	rafttest.Eventually(t, time.Minute, "convergence", func() error { return converged(t, nodes...) })
	for _, n := range nodes {
		rafttest.Eventually(t, time.Minute, n.id+" compacts its log", func() error {
			first, err := n.s.wal.FirstIndex()
			if err != nil {
				return err
			}
			last, _ := n.s.wal.LastIndex()
			if first <= 1 {
				return fmt.Errorf("its log holds %d-%d: nothing compacted", first, last)
			}
			return nil
		})
	}
	// The leader applied every entry itself (a follower may have
	// installed its snapshot instead): it sized what it keeps by them.
	if got := leader.s.fsm.growth.snapshot.Load(); got <= 0 {
		t.Fatalf("%s records no snapshot size", leader.id)
	}
	rc := leader.s.raft.ReloadableConfig()
	if rc.TrailingLogs < minTrailing || rc.TrailingLogs >= leader.s.trailingMost {
		t.Fatalf("%s keeps %d entries after a snapshot; want the trailing bytes' worth, in [%d, %d)", leader.id, rc.TrailingLogs, minTrailing, leader.s.trailingMost)
	}
	joiner := newNode(t, log, "n4")
	joiner.start(false, []string{leader.httpAddr})
	all := append(nodes, joiner)
	rafttest.Eventually(t, time.Minute, "n4 catches up", func() error { return converged(t, all...) })
	if joiner.s.fsm.restores.Load() == 0 {
		t.Fatal("n4 caught up by replaying the log, not from a snapshot")
	}
	if got := machines(joiner.s); len(got) != writes {
		t.Fatalf("n4 has %d machines, want %d", len(got), writes)
	}
}

// TestLogGrowthTrailing: the entries kept hold about the budget at the
// mean size seen, within their bounds; nothing seen keeps the most.
func TestLogGrowthTrailing(t *testing.T) {
	g := newLogGrowth(1 << 20)
	if got := g.trailing(1<<20, 10240); got != 10240 {
		t.Fatalf("with nothing applied: keep %d; want the configured 10240", got)
	}
	for range 100 {
		g.applied(64 << 10)
	}
	if got := g.trailing(1<<20, 10240); got != minTrailing {
		t.Fatalf("64 KiB entries, a 1 MiB budget: keep %d; want the floor %d", got, minTrailing)
	}
	g.frozen()
	for range 100 {
		g.applied(100)
	}
	if got := g.trailing(1<<20, 10240); got != 10240 {
		t.Fatalf("100-byte entries, a 1 MiB budget: keep %d; want the configured most", got)
	}
	if got := g.trailing(64<<10, 10240); got < 600 || got > 660 {
		t.Fatalf("100-byte entries, a 64 KiB budget: keep %d; want about 650", got)
	}
	// Due at the floor, then at the last snapshot's size when larger.
	select {
	case <-g.due:
	default:
	}
	g.frozen()
	g.snapshot.Store(4 << 20)
	for range 20 {
		g.applied(100 << 10)
	}
	select {
	case <-g.due:
		t.Fatal("due at 2 MB of log after a 4 MiB snapshot")
	default:
	}
	for range 30 {
		g.applied(100 << 10)
	}
	select {
	case <-g.due:
	default:
		t.Fatal("not due at 5 MB of log after a 4 MiB snapshot")
	}
}
