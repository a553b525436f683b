package waiters

import (
	"slices"
	"sync"
	"sync/atomic"
)

// Waiters is, by machine, the work polls waiting for work: the machine's
// wake-up signal, how many of its polls hold that signal with no work
// (parked), which of those a wake pushed to a pass and no pass has served
// yet (pushed), and the looks of those asleep, which a wake may push. L
// is the look a push hands back, for the caller to queue.
type Waiters[L any] struct {
	mu     sync.Mutex
	ready  map[string]*Broadcast
	parked map[string]int
	pushed map[string]int
	asleep map[string][]*Poll[L]
	// asleepN counts the polls asleep now, every machine's.
	asleepN int
	counts  counts
}

// counts are the waiters' work counters, read without the lock.
type counts struct {
	wakeups, pushes, twice atomic.Int64
}

// Where a poll is between its looks and the wakes.
const (
	// awake: the poll's goroutine, or a pass, holds the look.
	awake = iota
	// asleep: the poll sleeps until a wake, its timer or its end; a wake
	// may push its look.
	asleep
	// pushed: a wake handed the look to be queued; the poll waits for
	// its answer.
	pushed
)

// Poll is one work poll's sleep state. Every field is guarded by
// Waiters.mu.
type Poll[L any] struct {
	machine string
	look    L
	state   int
	// parked says the poll is counted in Waiters.parked: from its first
	// look until one finds work or the poll ends. A poll in a look is
	// parked, so that a wake made meanwhile signals it.
	parked bool
	// pushed says a wake pushed the look and it is counted in
	// Waiters.pushed until a pass takes it.
	pushed bool
	// woken says the poll was woken for work, by its signal or a push,
	// since its last look.
	woken bool
}

// New returns waiters with no poll.
func New[L any]() *Waiters[L] {
	return &Waiters[L]{ready: map[string]*Broadcast{}, parked: map[string]int{}, pushed: map[string]int{}, asleep: map[string][]*Poll[L]{}}
}

// NewPoll returns the sleep state of a poll of machine whose look is
// look.
func (w *Waiters[L]) NewPoll(machine string, look L) *Poll[L] {
	return &Poll[L]{machine: machine, look: look}
}

// Look begins p's look: it ends p's count as pushed, counts a wake-up if
// p was woken, counts p as parked until Found, and returns the machine's
// next signal. The caller takes it before it looks for work, so that a
// wake made after the look closes it.
func (w *Waiters[L]) Look(p *Poll[L]) *Signal {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.unpushLocked(p)
	if p.woken {
		w.counts.wakeups.Add(1)
		p.woken = false
	}
	if !p.parked {
		p.parked = true
		w.parked[p.machine]++
	}
	b := w.ready[p.machine]
	if b == nil {
		nb := NewBroadcast()
		b = &nb
		w.ready[p.machine] = b
	}
	return b.Signal()
}

// Found ends p's count as parked: its look found work.
func (w *Waiters[L]) Found(p *Poll[L]) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.unparkLocked(p)
}

// End ends every count of p: its poll returns.
func (w *Waiters[L]) End(p *Poll[L]) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.unparkLocked(p)
	w.unpushLocked(p)
}

// Sleep registers p, whose poll is about to sleep, for a push by its
// machine's next wake.
func (w *Waiters[L]) Sleep(p *Poll[L]) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p.state = asleep
	w.asleep[p.machine] = append(w.asleep[p.machine], p)
	w.asleepN++
}

// Awake takes p back for its poll, woken by anything (signalled says its
// signal fired), and reports whether a wake pushed its look first: its
// answer is then on its way.
func (w *Waiters[L]) Awake(p *Poll[L], signalled bool) (wasPushed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p.state == pushed {
		p.state = awake
		return true
	}
	p.state = awake
	p.woken = signalled
	if ls := w.asleep[p.machine]; len(ls) > 0 {
		ls = slices.DeleteFunc(ls, func(o *Poll[L]) bool { return o == p })
		if len(ls) == 0 {
			delete(w.asleep, p.machine)
		} else {
			w.asleep[p.machine] = ls
		}
		w.asleepN--
	}
	return false
}

// WokenTwice counts a pushed poll that its signal woke before its
// answer did.
func (w *Waiters[L]) WokenTwice() { w.counts.twice.Add(1) }

// Asleep says whether a poll of one of machines (of any machine, if all)
// is asleep: only then does a wake need to know whether the log's
// entries are applied (Wake).
func (w *Waiters[L]) Asleep(machines []string, all bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if all {
		return w.asleepN > 0
	}
	for _, m := range machines {
		if len(w.asleep[m]) > 0 {
			return true
		}
	}
	return false
}

// Wake tells the work polls of machines (of every machine, if all) to
// look again, telling them last, the log's last index. If applied (every
// entry through last is applied), the looks of the polls asleep are
// pushed instead: they are returned, for the caller to queue in one go,
// and a machine whose parked polls are all pushed is not signalled, so a
// pushed poll is woken once, by its answer. A poll that looked before
// the wake but is not asleep yet is parked and not pushed, so it still
// gets the signal.
func (w *Waiters[L]) Wake(machines []string, all bool, last uint64, applied bool) (looks []L) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if all {
		for m, b := range w.ready {
			looks = w.wakeLocked(m, b, last, applied, looks)
		}
		return looks
	}
	for _, m := range machines {
		if b := w.ready[m]; b != nil {
			looks = w.wakeLocked(m, b, last, applied, looks)
		}
	}
	return looks
}

func (w *Waiters[L]) wakeLocked(machine string, b *Broadcast, last uint64, applied bool, looks []L) []L {
	if applied {
		for _, p := range w.asleep[machine] {
			p.state = pushed
			p.woken = true
			p.pushed = true
			w.pushed[machine]++
			w.asleepN--
			w.counts.pushes.Add(1)
			looks = append(looks, p.look)
		}
		delete(w.asleep, machine)
	}
	// Pushed by this wake or an earlier one not served yet.
	if n := w.pushed[machine]; n > 0 && n == w.parked[machine] {
		return looks
	}
	b.NotifyAt(last)
	return looks
}

func (w *Waiters[L]) unparkLocked(p *Poll[L]) {
	if !p.parked {
		return
	}
	p.parked = false
	if w.parked[p.machine]--; w.parked[p.machine] == 0 {
		delete(w.parked, p.machine)
	}
}

func (w *Waiters[L]) unpushLocked(p *Poll[L]) {
	if !p.pushed {
		return
	}
	p.pushed = false
	if w.pushed[p.machine]--; w.pushed[p.machine] == 0 {
		delete(w.pushed, p.machine)
	}
}

// Stats are the waiters' counters: polls woken to look for work, looks
// pushed by a wake, pushed polls their signal woke as well, and the polls
// asleep now.
type Stats struct {
	Wakeups, Pushed, WokenTwice, Asleep int64
}

// Stats returns the counters.
func (w *Waiters[L]) Stats() Stats {
	w.mu.Lock()
	n := w.asleepN
	w.mu.Unlock()
	return Stats{Wakeups: w.counts.wakeups.Load(), Pushed: w.counts.pushes.Load(), WokenTwice: w.counts.twice.Load(), Asleep: int64(n)}
}
