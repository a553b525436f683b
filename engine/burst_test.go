package engine

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// logStore is a memStore that also says what is in its log (InFlight):
// the test announces entries before applying them, as a Raft leader's log
// holds proposals before they are applied.
type logStore struct {
	*memStore
	mu    sync.Mutex
	last  uint64
	asked chan uint64 // gets the index the window waits for, once
}

func (l *logStore) LastIndex() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return max(l.last, l.Index())
}

func (l *logStore) Applied(index uint64) bool {
	done := l.Index() >= index
	if !done {
		select {
		case l.asked <- index:
		default:
		}
	}
	return done
}

// TestWakeWaitsForTheEntriesInTheLog: a poll woken by the first of two
// entries already in the log waits for the second and hands out one
// universe that has both, even with a Window of an hour; and a poll woken
// with nothing else in the log hands out at once, where the old fixed
// Window would have kept it for the hour: its wake queues its look itself
// (push).
func TestWakeWaitsForTheEntriesInTheLog(t *testing.T) {
	// A fresh controller over the settled store: it rebuilds its views,
	// every unit settled and no claim held.
	mem, _, _ := tenMachinesSettled(t)
	s := &logStore{memStore: mem, asked: make(chan uint64, 1)}
	ctl := NewController(s, Options{Window: time.Hour})
	ctx := running(t, ctl)

	claim := func() <-chan []wire.Work {
		out := make(chan []wire.Work, 1)
		go func() {
			work, err := ctl.WaitForWork(ctx, "a0", 0, time.Hour)
			if err != nil {
				t.Errorf("claim: %v", err)
			}
			out <- work
		}()
		rafttest.Until(t, time.Minute, "a0's poll asleep, its look parked for a push", func() bool {
			return ctl.Stats().Asleep > 0
		})
		return out
	}

	// Two config changes of a, the second already in the log when the
	// first wakes a0.
	got := claim()
	s.mu.Lock()
	s.last = s.Index() + 2
	s.mu.Unlock()
	twoServices(t, s.memStore, 2)
	select {
	case want := <-s.asked: // a0 woke and waits for the second entry
		if want != s.Index()+1 {
			t.Fatalf("the window waits for entry %d; the second change will be %d", want, s.Index()+1)
		}
	case work := <-got:
		t.Fatalf("a0 got %d units without waiting for the entry in the log", len(work))
	}
	twoServices(t, s.memStore, 3)
	work := <-got
	if len(work) != 1 || fmt.Sprint(work[0].Universe.Config["n"]) != "3" {
		t.Fatalf("a0 got %+v (config %#v); want its unit with both changes (n=3)", work, work[0].Universe.Config)
	}
	if _, err := ctl.Accept(ctx, "a0", []wire.Report{{Unit: work[0].Unit, Hash: work[0].Hash, Output: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}

	// One change and nothing behind it: the hand-out does not wait.
	got = claim()
	twoServices(t, s.memStore, 4)
	select {
	case work := <-got:
		if len(work) != 1 {
			t.Fatalf("a0 got %d units after a change of a; want 1", len(work))
		}
	case <-time.After(time.Minute): // bounds a failure only: the window is an hour
		t.Fatal("a0's poll still waits after a change with nothing else in the log")
	}
	if st := ctl.Stats(); st.Pushed < 1 {
		t.Fatalf("pushed %d looks (woken %d); want the last wake's look pushed", st.Pushed, st.Wakeups)
	}
}
