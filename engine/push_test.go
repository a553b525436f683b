package engine

import (
	"context"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/model"
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
	rafttest.Until(t, time.Minute, "every poll asleep, its look parked for a push", func() bool {
		for _, m := range machines {
			if ctl.disp.looks.asleepOn(m) == 0 {
				return false
			}
		}
		return true
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
	d := ctl.disp
	d.listen()
	d.lock()
	d.wakeQueued()
	d.wakeAll()
	d.unlock()
	if s.asked != 0 {
		t.Fatalf("waking ten machines with no poll asleep asked the log %d times; want 0", s.asked)
	}
}

// TestAWakeSignalsThePollsItCouldNotPush: a wake skips the signal only
// when it pushed every parked poll of the machine. A poll that looked
// before the wake but is not asleep yet, and one a pass served that is
// going back to sleep, are parked and not pushed: each must still find
// its signal closed, or it sleeps through the change until its timer.
func TestAWakeSignalsThePollsItCouldNotPush(t *testing.T) {
	mem, _, _ := tenMachinesSettled(t)
	ctl := NewController(&logStore{memStore: mem}, Options{Window: time.Hour})
	if err := ctl.Refresh(); err != nil {
		t.Fatal(err)
	}
	look2 := func(ls ...*look) {
		t.Helper()
		if err := ctl.store.View(func(st *model.State) error {
			ctl.disp.lookNow(st, ls...)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	wake := ctl.disp.wakeNow
	asleep := &look{machine: "a0", ctx: context.Background()}
	looking := &look{machine: "a0", ctx: context.Background()}
	look2(asleep, looking)
	if len(asleep.work)+len(looking.work) != 0 {
		t.Fatal("a settled machine's looks found work")
	}
	ctl.disp.looks.sleep(asleep)
	wake("a0")
	if !closedNow(looking.sig.ch) {
		t.Fatal("the wake pushed the poll asleep and left the one not asleep yet unsignalled")
	}

	served := &look{machine: "a1", ctx: context.Background()}
	look2(served)
	ctl.disp.looks.sleep(served)
	sig := served.sig
	wake("a1")
	if closedNow(sig.ch) {
		t.Fatal("the wake pushed a1's only poll and signalled it as well")
	}
	<-served.done // the pass the push started
	if !served.parked || len(served.work) != 0 {
		t.Fatal("the pushed look found work or was not parked again")
	}
	wake("a1")
	if !closedNow(served.sig.ch) {
		t.Fatal("a poll served by a push and not asleep again missed the next wake")
	}
}
