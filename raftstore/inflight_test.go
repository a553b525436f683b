package raftstore

import (
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestLastIndexAndApplied: once an apply returns, every entry in the log is
// applied, and an index past the log's end is not: what the engine's wake
// window reads to tell whether a burst is still landing.
func TestLastIndexAndApplied(t *testing.T) {
	n := newNode(t, testLogger(t), "n1")
	n.start(true, nil)
	settled(t, n)
	if _, err := n.s.Apply(ctxT(t, 30*time.Second), machineCmd("m1", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	last := n.s.LastIndex()
	if last < n.s.Index() {
		t.Fatalf("last index %d is behind the applied index %d", last, n.s.Index())
	}
	if !n.s.Applied(last) {
		t.Fatalf("entry %d not applied after its apply returned (state at %d)", last, n.s.Index())
	}
	if n.s.Applied(last + 1) {
		t.Fatalf("entry %d, past the log's end (%d), counts as applied", last+1, last)
	}
}

// closedLogs is a log store that can no longer be read, as a node's is
// while it closes.
type closedLogs struct{ raft.LogStore }

func (closedLogs) GetLog(uint64, *raft.Log) error { return errors.New("database not open") }

// TestAppliedThroughWhatTheLogSays: raft counts an entry applied when it
// hands it to the FSM; between the FSM's index and the one asked, only
// no-ops may lie for the FSM to be through, and an entry the log no
// longer holds was compacted under a snapshot the FSM holds. A log that
// cannot be read says nothing: taken for compacted, it let a closing
// leader answer a linearizable read from an FSM still behind.
func TestAppliedThroughWhatTheLogSays(t *testing.T) {
	logs := raft.NewInmemStore()
	// 1-4 compacted; 5 a command; 6-7 a no-op and a barrier; 8 a command.
	for i, typ := range map[uint64]raft.LogType{5: raft.LogCommand, 6: raft.LogNoop, 7: raft.LogBarrier, 8: raft.LogCommand} {
		if err := logs.StoreLog(&raft.Log{Index: i, Type: typ}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		why              string
		idx, fsm, handed uint64
		logs             raft.LogStore
		want             bool
	}{
		{"the FSM is past it", 5, 5, 5, logs, true},
		{"raft has not handed it over", 8, 5, 7, logs, false},
		{"only a no-op and a barrier after the FSM's entry", 7, 5, 8, logs, true},
		{"a command the FSM has not applied", 8, 5, 8, logs, false},
		{"compacted below a snapshot the FSM holds", 4, 2, 8, logs, true},
		{"a log that cannot be read", 7, 5, 8, closedLogs{logs}, false},
	} {
		if got := appliedThrough(c.idx, c.fsm, c.handed, c.logs); got != c.want {
			t.Errorf("%s: appliedThrough(%d, fsm %d, handed %d) = %v, want %v", c.why, c.idx, c.fsm, c.handed, got, c.want)
		}
	}
}
