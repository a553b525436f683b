package waiters

import "testing"

// TestNotifyClosesOnlyWhatWasTaken: a notify nobody waits for closes
// nothing and makes nothing, yet still counts for since; the next waiter
// gets the round a later notify closes, with what that notify said.
func TestNotifyClosesOnlyWhatWasTaken(t *testing.T) {
	b := NewBroadcast()
	gen := b.gen
	first := b.cur
	b.NotifyAt(3)
	if b.cur != first {
		t.Fatal("a notify nobody waited for started a new round")
	}
	select {
	case <-b.Since(gen):
	default:
		t.Fatal("since(gen) is not closed after a notify that came after gen")
	}
	sig := b.Signal()
	select {
	case <-sig.ch:
		t.Fatal("the round a waiter took was closed before any notify after it")
	default:
	}
	b.NotifyAt(7)
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
