package raftstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// walEntries returns entries from..to, each carrying its index and tag.
func walEntries(from, to uint64, tag string) []*raft.Log {
	var logs []*raft.Log
	for i := from; i <= to; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: []byte(fmt.Sprintf("%s %d", tag, i))})
	}
	return logs
}

// storeEach appends entries from..to one batch each, as a follower does
// when it receives them one at a time.
func storeEach(t *testing.T, l raft.LogStore, from, to uint64, tag string) {
	t.Helper()
	for _, e := range walEntries(from, to, tag) {
		if err := l.StoreLogs([]*raft.Log{e}); err != nil {
			t.Fatalf("append entry %d: %v", e.Index, err)
		}
	}
}

// wantEntries checks that l holds entries from..to as walEntries made
// them with tag.
func wantEntries(t *testing.T, l raft.LogStore, from, to uint64, tag string) {
	t.Helper()
	for i := from; i <= to; i++ {
		var e raft.Log
		if err := l.GetLog(i, &e); err != nil {
			t.Fatalf("read entry %d: %v", i, err)
		}
		if want := fmt.Sprintf("%s %d", tag, i); string(e.Data) != want {
			t.Fatalf("entry %d holds %q, want %q", i, e.Data, want)
		}
	}
}

// wantBounds checks the first and last index of l.
func wantBounds(t *testing.T, l raft.LogStore, first, last uint64) {
	t.Helper()
	f, ferr := l.FirstIndex()
	g, lerr := l.LastIndex()
	if f != first || g != last || ferr != nil || lerr != nil {
		t.Fatalf("the log holds %d-%d (%v, %v), want %d-%d", f, g, ferr, lerr, first, last)
	}
}

func reopenWAL(t *testing.T, l *walLog, path string, segment int) *walLog {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := openWAL(path, segment, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("reopen the log: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestALogWhoseTailWasDeletedOpensAgain: Raft deletes the suffix of the
// log that a new leader does not have, and a node restarted after that
// reads every entry it kept and appends after them. raft-wal v0.4.0
// sealed the tail without its index there, and every read of it after a
// restart failed.
func TestALogWhoseTailWasDeletedOpensAgain(t *testing.T) {
	path := t.TempDir()
	const segment = 64 << 10
	l, err := openWAL(path, segment, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	storeEach(t, l, 1, 100, "old")
	if err := l.DeleteRange(91, 100); err != nil {
		t.Fatal(err)
	}

	l = reopenWAL(t, l, path, segment)
	wantBounds(t, l, 1, 90)
	wantEntries(t, l, 1, 90, "old")
	storeEach(t, l, 91, 120, "new")

	l = reopenWAL(t, l, path, segment)
	wantBounds(t, l, 1, 120)
	wantEntries(t, l, 1, 90, "old")
	wantEntries(t, l, 91, 120, "new")

	// Once more, with the suffix in a segment after the one that ends.
	if err := l.DeleteRange(115, 120); err != nil {
		t.Fatal(err)
	}
	l = reopenWAL(t, l, path, segment)
	wantBounds(t, l, 1, 114)
	wantEntries(t, l, 91, 114, "new")
	storeEach(t, l, 115, 130, "newer")
	l = reopenWAL(t, l, path, segment)
	wantEntries(t, l, 1, 90, "old")
	wantEntries(t, l, 91, 114, "new")
	wantEntries(t, l, 115, 130, "newer")
}

// TestAFollowerWhoseTailRaftDeletedRestarts: a follower holds an entry
// the leader of its term never committed; after a leader change the new
// leader's entries replace it ("clearing log suffix"), and the follower
// restarts afterwards, catches up, and takes writes. With raft-wal v0.4.0
// that restart panicked in raft's scan of the log.
func TestAFollowerWhoseTailRaftDeletedRestarts(t *testing.T) {
	log := testLogger(t)
	ctx := ctxT(t, 120*time.Second)
	nodes := make([]*node, 3)
	for i := range nodes {
		nodes[i] = newNode(t, log, fmt.Sprintf("n%d", i+1))
		// One segment holds the whole log, so the deleted suffix is in
		// the tail segment, with entries before it that the node keeps.
		nodes[i].segment = 64 << 10
	}
	nodes[0].start(true, nil)
	nodes[1].start(false, []string{nodes[0].httpAddr})
	nodes[2].start(false, []string{nodes[0].httpAddr})
	rafttest.Eventually(t, time.Minute, "three voters", func() error { return voters(nodes, 3) })
	leader := waitLeader(t, nodes...)
	write := func(via *node, name string) {
		t.Helper()
		if _, err := via.s.Apply(ctx, machineCmd(name, "10.3.0.1")); err != nil {
			t.Fatalf("apply %s via %s: %v", name, via.id, err)
		}
	}
	write(leader, "m1")
	rafttest.Eventually(t, time.Minute, "convergence", func() error { return converged(t, nodes...) })

	// The follower gets an entry of the leader's term that goes no
	// further: written into its log while it is down.
	follower := others(nodes, leader)[0]
	follower.stop()
	ghost, err := encodeEntry(entryCommand, machineCmd("ghost", "10.3.0.66"))
	if err != nil {
		t.Fatal(err)
	}
	bolt := openBolt(t, follower.dir)
	fl, err := openLog(follower.dir, bolt, follower.segment, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	kept, _ := fl.LastIndex()
	var prev raft.Log
	if err := fl.GetLog(kept, &prev); err != nil {
		t.Fatal(err)
	}
	if err := fl.StoreLog(&raft.Log{Index: kept + 1, Term: prev.Term, Type: raft.LogCommand, Data: ghost}); err != nil {
		t.Fatal(err)
	}
	if err := fl.Close(); err != nil {
		t.Fatal(err)
	}
	if err := bolt.Close(); err != nil {
		t.Fatal(err)
	}

	// A new leader, in a new term, writes over that index.
	next := others(nodes, leader, follower)[0]
	if err := leader.s.raft.LeadershipTransferToServer(raft.ServerID(next.id), raft.ServerAddress(next.raftAddr)).Error(); err != nil {
		t.Fatalf("leadership transfer: %v", err)
	}
	leader = waitLeader(t, nodes...)
	write(leader, "m2")

	follower.start(false, nil)
	rafttest.Eventually(t, time.Minute, "the follower catches up", func() error { return converged(t, nodes...) })
	var got raft.Log
	if err := follower.s.wal.GetLog(kept+1, &got); err != nil {
		t.Fatal(err)
	}
	if got.Term == prev.Term {
		t.Fatalf("entry %d on %s is still of term %d: the leader's did not replace it", kept+1, follower.id, prev.Term)
	}

	follower.stop()
	follower.start(false, nil)
	rafttest.Eventually(t, time.Minute, "the restarted follower catches up", func() error { return converged(t, nodes...) })
	write(follower, "m3") // forwarded, and replicated back into its log
	if err := follower.s.Linearize(ctx); err != nil {
		t.Fatal(err)
	}
	got3 := machines(follower.s)
	if len(got3) != 3 || got3["m1"] == "" || got3["m2"] == "" || got3["m3"] == "" {
		t.Fatalf("%s holds machines %v, want m1, m2, m3 and no ghost", follower.id, got3)
	}
	first, _ := follower.s.wal.FirstIndex()
	last, _ := follower.s.wal.LastIndex()
	for i := first; i <= last; i++ {
		if err := follower.s.wal.GetLog(i, &got); err != nil {
			t.Fatalf("%s reads entry %d of %d-%d: %v", follower.id, i, first, last, err)
		}
	}
}
