package raftstore

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// TestNoLeaderGivesUp: a node cut off from the majority does not hold a
// caller without a deadline forever: writes, reads and removals end with
// ErrNoLeader once it has known no leader for the hold time, and say so.
func TestNoLeaderGivesUp(t *testing.T) {
	log := testLogger(t)
	n1, n2 := newNode(t, log, "n1"), newNode(t, log, "n2")
	n2.hold = time.Second
	n1.start(true, nil)
	n2.start(false, []string{n1.httpAddr})
	rafttest.Eventually(t, time.Minute, "two voters", func() error { return voters([]*node{n1, n2}, 2) })
	waitLeader(t, n1, n2)
	n1.stop() // n2 alone is no quorum

	ctx := ctxT(t, time.Minute) // far longer than the hold
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNoLeader) || !strings.Contains(err.Error(), "without a leader") || ctx.Err() != nil {
			t.Fatalf("%s without quorum: got %v, want ErrNoLeader saying it gave up without a leader", what, err)
		}
		t.Logf("%s without quorum: %v", what, err)
	}
	_, err := n2.s.Apply(ctx, machineCmd("m1", "10.0.0.1"))
	check("apply", err)
	check("linearize", n2.s.Linearize(ctx))
	check("remove", n2.s.Remove(ctx, "n1"))

	// A leader that comes back in time is waited for.
	n2.s.cfg.leaderHold = time.Minute
	done := make(chan error, 1)
	go func() {
		_, err := n2.s.Apply(ctx, machineCmd("m1", "10.0.0.1"))
		done <- err
	}()
	n1.start(false, nil)
	if err := <-done; err != nil {
		t.Fatalf("apply while the leader came back: %v", err)
	}
}
