package raftstore

import (
	"testing"
	"time"
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
