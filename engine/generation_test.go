package engine

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// TestWakeQueuedAllocatesNothing: every settled unit's report wakes the
// machines of the queued units; with 1,000 machines known that must not
// cost an allocation per report (it was half of what the server allocated
// during bench/agents' change rounds).
func TestWakeQueuedAllocatesNothing(t *testing.T) {
	s, ctl, _ := tenMachinesSettled(t)
	// Each machine's agent polls once: all 1,000 are known.
	for i := range 1000 {
		if _, err := ctl.WaitForWork(context.Background(), fmt.Sprintf("m%04d", i), 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	twoServices(t, s, 2)
	if sum, err := ctl.Summary(0); err != nil || sum.Phases.Pending == 0 {
		t.Fatalf("nothing queued after a change (%v): the test would measure nothing", err)
	}
	// A restarted agent with nothing claimed: its release wakes the
	// machines of the queued units.
	wakeQueued := func() { ctl.Release("m0000") }
	if n := testing.AllocsPerRun(100, wakeQueued); n != 0 {
		t.Fatalf("a wake of the queued units allocated %.0f times per call with no poll waiting; want 0", n)
	}
}

// A status generation moves at each note and wakes who waits for the next
// one; a wait for one already past is over at once, so a long poll that
// passes the generation it saw misses no note, from any goroutine.
func TestGenerationMissesNoNote(t *testing.T) {
	g := newGeneration()
	gen := g.current()
	next := g.wait()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.note()
		}()
	}
	wg.Wait()
	select {
	case <-next:
	default:
		t.Fatal("a wait was not woken by the notes after it")
	}
	if got := g.current(); got != gen+8 {
		t.Fatalf("generation %d after 8 notes from %d", got, gen)
	}
	select {
	case <-g.since(gen):
	default:
		t.Fatal("a wait since a past generation is not over at once")
	}
	select {
	case <-g.since(g.current()):
		t.Fatal("a wait since the current generation is over before any note")
	default:
	}
}
