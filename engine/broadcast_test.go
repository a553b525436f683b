package engine

import (
	"fmt"
	"sync"
	"testing"
)

// TestNotifyClosesOnlyWhatWasTaken: a notify nobody waits for closes
// nothing and makes nothing, yet still counts for since; the next waiter
// gets the round a later notify closes, with what that notify said.
func TestNotifyClosesOnlyWhatWasTaken(t *testing.T) {
	b := newBroadcast()
	gen := b.gen
	first := b.cur
	b.notifyAt(3)
	if b.cur != first {
		t.Fatal("a notify nobody waited for started a new round")
	}
	select {
	case <-b.since(gen):
	default:
		t.Fatal("since(gen) is not closed after a notify that came after gen")
	}
	sig := b.signal()
	select {
	case <-sig.ch:
		t.Fatal("the round a waiter took was closed before any notify after it")
	default:
	}
	b.notifyAt(7)
	select {
	case <-sig.ch:
	default:
		t.Fatal("a notify did not close the round a waiter took")
	}
	if sig.last != 7 {
		t.Fatalf("the closed round says last=%d; want 7, what its notify said", sig.last)
	}
	if b.cur == sig {
		t.Fatal("the closed round is still the current one")
	}
}

// TestWakeQueuedAllocatesNothing: every settled unit's report wakes the
// machines of the queued units; with 1,000 machines known that must not
// cost an allocation per report (it was half of what the server allocated
// during bench/agents' change rounds).
func TestWakeQueuedAllocatesNothing(t *testing.T) {
	_, ctl, _ := tenMachinesSettled(t)
	d := ctl.disp
	machines := make([]string, 1000)
	for i := range machines {
		machines[i] = fmt.Sprintf("m%04d", i)
	}
	if d.listen(machines...) == 0 {
		t.Fatal("nothing queued: the test would measure nothing")
	}
	wakeQueued := func() {
		d.lock()
		defer d.unlock()
		d.wakeQueued()
	}
	if n := testing.AllocsPerRun(100, wakeQueued); n != 0 {
		t.Fatalf("wakeQueued allocated %.0f times per call with no poll waiting; want 0", n)
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
