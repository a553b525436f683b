package raftstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"github.com/hashicorp/raft-wal/migrate"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// oldDataDir writes what an older fixpoint kept in raft.db: entries 1..n
// and the term, in dir.
func oldDataDir(t *testing.T, dir string, n int) {
	t.Helper()
	bolt := openBolt(t, dir)
	var logs []*raft.Log
	for i := 1; i <= n; i++ {
		logs = append(logs, &raft.Log{Index: uint64(i), Term: 2, Type: raft.LogCommand, Data: []byte(fmt.Sprintf("entry %d", i))})
	}
	if err := bolt.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := bolt.SetUint64([]byte("CurrentTerm"), 2); err != nil {
		t.Fatal(err)
	}
	if err := bolt.Close(); err != nil {
		t.Fatal(err)
	}
}

func openBolt(t *testing.T, dir string) *raftboltdb.BoltStore {
	t.Helper()
	bolt, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db")})
	if err != nil {
		t.Fatal(err)
	}
	return bolt
}

// copyBack copies the WAL in dir back into raft.db, where an older
// fixpoint kept its log.
func copyBack(t *testing.T, dir string, bolt *raftboltdb.BoltStore) {
	t.Helper()
	src, err := openWAL(filepath.Join(dir, walDir), walSegmentSize, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := migrate.CopyLogs(context.Background(), bolt, src, migrateBatchBytes, nil); err != nil {
		t.Fatal(err)
	}
}

// wantLog checks that log holds entries 1..n as oldDataDir wrote them.
func wantLog(t *testing.T, log raft.LogStore, n int) {
	t.Helper()
	first, _ := log.FirstIndex()
	last, _ := log.LastIndex()
	if first != 1 || last != uint64(n) {
		t.Fatalf("the log holds entries %d-%d, want 1-%d", first, last, n)
	}
	for i := 1; i <= n; i++ {
		var l raft.Log
		if err := log.GetLog(uint64(i), &l); err != nil || string(l.Data) != fmt.Sprintf("entry %d", i) || l.Term != 2 {
			t.Fatalf("entry %d: %q term %d, %v", i, l.Data, l.Term, err)
		}
	}
}

// TestAnOlderDataDirsLogMovesIntoTheWAL: raft.db's entries are copied into
// the WAL, dropped from raft.db, the term stays, and a second open finds
// the WAL as the first left it.
func TestAnOlderDataDirsLogMovesIntoTheWAL(t *testing.T) {
	dir := t.TempDir()
	oldDataDir(t, dir, 300)
	bolt := openBolt(t, dir)
	defer bolt.Close()
	w, err := openLog(dir, bolt, walSegmentSize, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	wantLog(t, w, 300)
	if last, _ := bolt.LastIndex(); last != 0 {
		t.Errorf("raft.db still holds entries up to %d", last)
	}
	if term, err := bolt.GetUint64([]byte("CurrentTerm")); term != 2 || err != nil {
		t.Errorf("the term in raft.db is %d (%v), want 2", term, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w, err = openLog(dir, bolt, walSegmentSize, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	wantLog(t, w, 300)
}

// TestAnInterruptedMigrationStartsOver: a copy that a crash cut short is
// thrown away and made again; one that completed but had not dropped
// raft.db's entries yet drops them, and keeps the WAL as it is.
func TestAnInterruptedMigrationStartsOver(t *testing.T) {
	dir := t.TempDir()
	oldDataDir(t, dir, 50)
	partial := filepath.Join(dir, walDir+".partial")
	if err := os.MkdirAll(partial, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(partial, "00000000000000000001-0000000000000001.wal"), []byte("torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	bolt := openBolt(t, dir)
	defer bolt.Close()
	w, err := openLog(dir, bolt, walSegmentSize, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	wantLog(t, w, 50)
	if _, err := os.Stat(partial); !os.IsNotExist(err) {
		t.Errorf("the interrupted copy is still there: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// The crash came after the rename and before raft.db's entries were
	// dropped: they are still there, and already in the WAL.
	copyBack(t, dir, bolt)
	w, err = openLog(dir, bolt, walSegmentSize, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	wantLog(t, w, 50)
	if last, _ := bolt.LastIndex(); last != 0 {
		t.Errorf("raft.db still holds entries up to %d", last)
	}
}

// TestANodeComesBackFromAnOlderDataDir: a node whose log is in raft.db, as
// an older fixpoint wrote it, starts with the same state at the same
// index, replayed from the moved log, and goes on writing.
func TestANodeComesBackFromAnOlderDataDir(t *testing.T) {
	n := newNode(t, testLogger(t), "n1")
	n.start(true, nil)
	settled(t, n)
	ctx := ctxT(t, 30*time.Second)
	if _, err := n.s.Apply(ctx, deployCmd()); err != nil {
		t.Fatal(err)
	}
	if _, err := n.s.Apply(ctx, machineCmd("m1", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	want, idx := stateBytes(t, n.s), n.s.Index()
	n.stop()

	// The data dir as an older fixpoint left it: the log in raft.db, no wal.
	bolt := openBolt(t, n.dir)
	copyBack(t, n.dir, bolt)
	if err := bolt.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(n.dir, walDir)); err != nil {
		t.Fatal(err)
	}

	n.start(false, nil)
	if err := n.s.Linearize(ctx); err != nil {
		t.Fatal(err)
	}
	if got := n.s.Index(); got != idx {
		t.Fatalf("index after the move %d, want %d", got, idx)
	}
	if got := stateBytes(t, n.s); got != want {
		t.Fatalf("state after the move differs:\n got %s\nwant %s", got, want)
	}
	if _, err := n.s.Apply(ctx, machineCmd("m2", "10.0.0.2")); err != nil {
		t.Fatalf("a write after the move: %v", err)
	}
	var machines int
	n.s.View(func(st *model.State) error { machines = len(st.Machines); return nil })
	if machines != 2 {
		t.Fatalf("%d machines after a write, want 2", machines)
	}
}

// TestAFollowerBehindTheLogInstallsASnapshotOverItsOwn: a follower that
// was down while the others compacted past its last entry gets a snapshot
// over the log it kept, which the WAL drops whole, and appends after it:
// every acknowledged write is there, and it keeps taking writes.
func TestAFollowerBehindTheLogInstallsASnapshotOverItsOwn(t *testing.T) {
	log := testLogger(t)
	ctx := ctxT(t, 90*time.Second)
	nodes := make([]*node, 3)
	for i := range nodes {
		nodes[i] = newNode(t, log, fmt.Sprintf("n%d", i+1))
		nodes[i].trailing, nodes[i].segment = 4, 1<<10
	}
	nodes[0].start(true, nil)
	nodes[1].start(false, []string{nodes[0].httpAddr})
	nodes[2].start(false, []string{nodes[0].httpAddr})
	rafttest.Eventually(t, time.Minute, "three voters", func() error { return voters(nodes, 3) })
	leader := waitLeader(t, nodes...)
	behind := others(nodes, leader)[0]
	write := func(via *node, name string) {
		t.Helper()
		if _, err := via.s.Apply(ctx, machineCmd(name, "10.2.0.1")); err != nil {
			t.Fatalf("apply %s via %s: %v", name, via.id, err)
		}
	}
	write(leader, "m1")
	rafttest.Eventually(t, time.Minute, "convergence", func() error { return converged(t, nodes...) })
	kept, _ := behind.s.wal.LastIndex()
	behind.stop()

	for i := 2; i < 40; i++ {
		write(leader, fmt.Sprintf("m%d", i))
	}
	for _, n := range others(nodes, behind) {
		if err := n.s.Snapshot(ctx); err != nil {
			t.Fatal(err)
		}
		var l raft.Log
		if err := n.s.wal.GetLog(kept+1, &l); err == nil {
			t.Fatalf("%s still reads entry %d after compaction: the test would not need a snapshot", n.id, kept+1)
		}
	}

	behind.start(false, nil)
	rafttest.Eventually(t, time.Minute, "the node behind catches up", func() error { return converged(t, nodes...) })
	if behind.s.fsm.restores.Load() == 0 {
		t.Fatalf("%s caught up without a snapshot install", behind.id)
	}
	write(behind, "m40") // forwarded, and replicated back into its WAL
	if err := behind.s.Linearize(ctx); err != nil {
		t.Fatal(err)
	}
	if got := machines(behind.s); len(got) != 40 {
		t.Fatalf("%s has %d machines after catching up, want 40", behind.id, len(got))
	}
	first, _ := behind.s.wal.FirstIndex()
	last, _ := behind.s.wal.LastIndex()
	if first <= kept || last < first {
		t.Fatalf("%s's log holds %d-%d after the install; its old entries end at %d", behind.id, first, last, kept)
	}
}
