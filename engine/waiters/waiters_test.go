package waiters

import (
	"slices"
	"testing"
)

func closedNow(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestAWakeSignalsThePollsItCouldNotPush: a wake skips the signal only
// when it pushed every parked poll of the machine. A poll that looked
// before the wake but is not asleep yet, and one a pass served that is
// going back to sleep, are parked and not pushed: each must still find
// its signal closed, or it sleeps through the change until its timer.
func TestAWakeSignalsThePollsItCouldNotPush(t *testing.T) {
	w := New[string]()
	asleep, looking := w.NewPoll("a0", "asleep"), w.NewPoll("a0", "looking")
	w.Look(asleep)
	sig := w.Look(looking)
	w.Sleep(asleep)
	if got := w.Wake([]string{"a0"}, false, 7, true); !slices.Equal(got, []string{"asleep"}) {
		t.Fatalf("the wake pushed %v; want the poll asleep", got)
	}
	if !closedNow(sig.C()) || sig.Last() != 7 {
		t.Fatal("the wake pushed the poll asleep and left the one not asleep yet unsignalled")
	}

	served := w.NewPoll("a1", "served")
	sig = w.Look(served)
	w.Sleep(served)
	if got := w.Wake([]string{"a1"}, false, 8, true); !slices.Equal(got, []string{"served"}) {
		t.Fatalf("the wake pushed %v; want a1's poll", got)
	}
	if closedNow(sig.C()) {
		t.Fatal("the wake pushed a1's only poll and signalled it as well")
	}
	// The pass the push started serves it; it finds nothing.
	sig = w.Look(served)
	if !w.Awake(served, false) {
		t.Fatal("a pushed poll was not told its look was pushed")
	}
	w.Wake([]string{"a1"}, false, 9, true)
	if !closedNow(sig.C()) {
		t.Fatal("a poll served by a push and not asleep again missed the next wake")
	}
	if st := w.Stats(); st.Pushed != 2 || st.Wakeups != 1 || st.Asleep != 0 {
		t.Fatalf("counts %+v; want 2 pushed, 1 woken (the served push), none asleep", st)
	}
}

// TestAWakeBeforeTheLogIsAppliedSignals: with entries of the log not yet
// applied, a wake pushes nobody: the polls wake on their signal and let
// the entries land first.
func TestAWakeBeforeTheLogIsAppliedSignals(t *testing.T) {
	w := New[int]()
	p := w.NewPoll("m", 1)
	sig := w.Look(p)
	w.Sleep(p)
	if !w.Asleep([]string{"m"}, false) || !w.Asleep(nil, true) || w.Asleep([]string{"other"}, false) {
		t.Fatal("Asleep does not say which machines have a poll asleep")
	}
	if got := w.Wake(nil, true, 3, false); len(got) != 0 {
		t.Fatalf("a wake before the log was applied pushed %v", got)
	}
	if !closedNow(sig.C()) {
		t.Fatal("the poll asleep was not signalled")
	}
	if w.Awake(p, true) {
		t.Fatal("a signalled poll was taken for pushed")
	}
	w.Look(p)
	w.Found(p)
	w.End(p)
	if st := w.Stats(); st.Wakeups != 1 || st.Asleep != 0 {
		t.Fatalf("counts %+v; want one wake-up, none asleep", st)
	}
	if len(w.parked) != 0 || len(w.pushed) != 0 || len(w.asleep) != 0 {
		t.Fatalf("a poll that ended left counts: parked %v pushed %v asleep %v", w.parked, w.pushed, w.asleep)
	}
}
