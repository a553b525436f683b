package engine

import (
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// TestAChangeIsHandedOutInOnePass: the five polls a change of service a
// concerns are asleep; the wake queues their looks itself (push), and one
// pass answers all five, each with its unit, where each poll used to wake,
// take the lock and queue its own look, and the first few were served in
// a pass of their own. No poll is signalled on top of its push.
func TestAChangeIsHandedOutInOnePass(t *testing.T) {
	mem, _, machines := tenMachinesSettled(t)
	s := &logStore{memStore: mem, asked: make(chan uint64, 1)}
	ctl := NewController(s, Options{Window: time.Hour})
	results := pollAll(running(t, ctl), ctl, machines)
	rafttest.Until(t, time.Minute, "every poll asleep, its look waiting for a push", func() bool {
		return ctl.Stats().Asleep == int64(len(machines))
	})
	before := ctl.Stats()

	twoServices(t, s.memStore, 2)
	for range 5 {
		select {
		case g := <-results:
			if g.units != 1 || g.machine[0] != 'a' {
				t.Fatalf("%s returned %d units; only a's five machines have work", g.machine, g.units)
			}
		case <-time.After(time.Minute): // bounds a failure only
			t.Fatal("a's polls were not all answered after a change of a")
		}
	}
	after := ctl.Stats()
	if n := after.Pushed - before.Pushed; n != 5 {
		t.Fatalf("%d looks pushed; want a's five", n)
	}
	if n := after.Passes - before.Passes; n != 1 {
		t.Fatalf("a's five looks were served in %d passes; want one", n)
	}
	if n := after.Wakeups - before.Wakeups; n != 5 {
		t.Fatalf("%d polls woken; want a's five, none of b's", n)
	}
	// Each of a's polls was asleep and pushed: its answer is its one
	// wake-up, no signal before it.
	if n := after.WokenTwice - before.WokenTwice; n != 0 {
		t.Fatalf("%d pushed polls woken by their signal as well; want none", n)
	}
}

// askingStore counts how often the controller asks whether an index is
// applied; its log always holds one entry more than it applied.
type askingStore struct {
	*memStore
	asked int
}

func (s *askingStore) LastIndex() uint64 { return s.Index() + 1 }

func (s *askingStore) Applied(index uint64) bool {
	s.asked++
	return s.Index() >= index
}

// TestWakesAskTheLogOnlyForSleepingPolls: a report wakes the machines of
// every queued unit, most of them running hooks; asking the store about
// an index in flight reads its log, so a wake asks only for a machine
// with a poll asleep.
func TestWakesAskTheLogOnlyForSleepingPolls(t *testing.T) {
	mem, _, _ := tenMachinesSettled(t)
	s := &askingStore{memStore: mem}
	ctl := NewController(s, Options{Window: time.Hour})
	if err := ctl.Refresh(); err != nil {
		t.Fatal(err)
	}
	twoServices(t, mem, 2)
	if err := ctl.Refresh(); err != nil {
		t.Fatal(err)
	}
	s.asked = 0
	// A restarted agent wakes the machines of the queued units; a
	// leader change wakes every machine.
	ctl.Release("a0")
	ctl.work.apply(ctl.work.ledger.Forget())
	if s.asked != 0 {
		t.Fatalf("waking ten machines with no poll asleep asked the log %d times; want 0", s.asked)
	}
}
