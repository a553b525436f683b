package ledger

import (
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/schedule"
)

// heldStatus records what the ledger tells status, and whether the
// ledger's lock was held when it did.
type heldStatus struct {
	l                *Ledger
	told, outsideMu  int
	recountAll, seen bool
}

func (h *heldStatus) held() {
	h.told++
	if h.l.mu.TryLock() {
		h.outsideMu++
		h.l.mu.Unlock()
	}
}
func (h *heldStatus) Recount(units ...string) { h.held(); h.seen = h.seen || len(units) > 0 }
func (h *heldStatus) RecountAll()             { h.held(); h.recountAll = true }
func (h *heldStatus) Changed()                { h.held() }

// TestStatusIsToldUnderTheLock: what a refresh moves in status is told
// before the ledger's lock is released, so that a summary which finds the
// views brought up to its state (Refreshed: nothing left to do) finds
// status's marks of them too, and never counts a stale unit as settled.
func TestStatusIsToldUnderTheLock(t *testing.T) {
	w := newWorld(t)
	w.shop(2, 2)
	st := &heldStatus{}
	l := New(Options{Backoff: schedule.DefaultBackoff, Lease: time.Minute, Now: time.Now, Status: st, Changes: w.changes}, standIn)
	st.l = l
	l.Refresh(w.st).Done()
	if st.told == 0 || !(st.recountAll || st.seen) {
		t.Fatalf("the first refresh told status nothing (told %d)", st.told)
	}
	if st.outsideMu != 0 {
		t.Fatalf("status was told %d of %d times after the ledger's lock was released", st.outsideMu, st.told)
	}
	// A reader that comes later has nothing left to tell.
	before := st.told
	_, owed := l.Refreshed(w.st)
	owed.Done()
	if st.told != before {
		t.Errorf("Refreshed at the same state told status again (%d times)", st.told-before)
	}
}
