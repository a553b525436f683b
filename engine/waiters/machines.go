package waiters

import (
	"sync"
	"sync/atomic"
)

// Machines is each machine's wake-up signal, shared by the controllers
// of a fleet (one per environment): a poll that waits on every
// environment at once sleeps on its machine's signal alone, and any
// controller that wakes the machine's polls closes it. Its lock is a
// leaf, as Waiters'.
type Machines struct {
	mu    sync.Mutex
	ready map[string]*Broadcast
	// asleep counts the polls asleep on each machine's signal.
	asleep  map[string]int
	asleepN int
	wakeups atomic.Int64
}

// NewMachines returns signals with no poll.
func NewMachines() *Machines {
	return &Machines{ready: map[string]*Broadcast{}, asleep: map[string]int{}}
}

// Signal returns machine's next signal. A poll takes it before it looks
// for work, so that a wake made after the look closes it.
func (m *Machines) Signal(machine string) *Signal {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.ready[machine]
	if b == nil {
		nb := NewBroadcast()
		b = &nb
		m.ready[machine] = b
	}
	return b.Signal()
}

// Sleep counts a poll of machine asleep until Awake.
func (m *Machines) Sleep(machine string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.asleep[machine]++
	m.asleepN++
}

// Awake ends Sleep's count; signalled says the poll's signal woke it.
func (m *Machines) Awake(machine string, signalled bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.asleep[machine]--; m.asleep[machine] <= 0 {
		delete(m.asleep, machine)
	}
	m.asleepN--
	if signalled {
		m.wakeups.Add(1)
	}
	if b := m.ready[machine]; b != nil && m.asleep[machine] == 0 && !b.taken {
		// No poll holds the signal: a machine that stops polling
		// keeps nothing here.
		delete(m.ready, machine)
	}
}

// Wake closes the signals of machines (of every machine, if all),
// telling them last, the log's last index, and returns how many polls
// asleep on them it woke.
func (m *Machines) Wake(machines []string, all bool, last uint64) (woken int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if all {
		for machine, b := range m.ready {
			woken += m.asleep[machine]
			b.NotifyAt(last)
		}
		return woken
	}
	for _, machine := range machines {
		if b := m.ready[machine]; b != nil {
			woken += m.asleep[machine]
			b.NotifyAt(last)
		}
	}
	return woken
}

// Asleep is how many polls are asleep now.
func (m *Machines) Asleep() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return int64(m.asleepN)
}

// Wakeups counts the polls their signal woke.
func (m *Machines) Wakeups() int64 { return m.wakeups.Load() }
