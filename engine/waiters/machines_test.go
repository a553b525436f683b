package waiters

import "testing"

// TestMachinesWakeTheirOwnPollsAlone: a wake closes the signal of each
// machine it names, taken before the wake, telling the log's index, and
// counts the polls asleep on it; another machine's poll sleeps on. A wake
// of every machine reaches the rest; a machine whose polls all ended
// keeps no signal.
func TestMachinesWakeTheirOwnPollsAlone(t *testing.T) {
	m := NewMachines()
	a, b := m.Signal("a"), m.Signal("b")
	m.Sleep("a")
	m.Sleep("b")
	if n := m.Wake([]string{"a", "nobody"}, false, 9); n != 1 {
		t.Fatalf("a wake of a woke %d polls; want 1", n)
	}
	if !closedNow(a.C()) || a.Last() != 9 {
		t.Fatal("a wake of a left its signal open")
	}
	if closedNow(b.C()) {
		t.Fatal("a wake of a closed b's signal")
	}
	m.Awake("a", true)
	if m.Asleep() != 1 || m.Wakeups() != 1 {
		t.Fatalf("asleep %d, wakeups %d; want b asleep and a woken", m.Asleep(), m.Wakeups())
	}
	if n := m.Wake(nil, true, 10); n != 1 || !closedNow(b.C()) {
		t.Fatalf("a wake of every machine woke %d polls (b's signal closed: %v); want b's", n, closedNow(b.C()))
	}
	m.Awake("b", true)
	m.mu.Lock()
	left := len(m.ready) + len(m.asleep)
	m.mu.Unlock()
	if left != 0 || m.Asleep() != 0 {
		t.Fatalf("%d machines kept, %d polls asleep after every poll ended; want none", left, m.Asleep())
	}
}
