package engine

import (
	"context"
	"sync"
	"time"
)

// broadcast wakes everyone waiting for the next change: waiters take the
// channel from wait (or the signal from signal) and block on it; notify
// closes it and starts the next one. The caller's lock guards it.
type broadcast struct {
	cur *signal
	// gen counts notifies: a waiter that read gen with what it saw
	// learns of a notify it was not yet waiting for.
	gen uint64
	// taken says cur was handed to a waiter since the last notify. A
	// notify nobody waits for closes nothing and makes no channel:
	// every report notifies the machines of every queued unit, most
	// with no poll waiting.
	taken bool
}

// signal is one round of a broadcast: ch is closed at its notify, and
// last is what the notifier said then (the log's last index, for work
// polls). last is written before ch is closed, so a waiter that saw ch
// closed reads it without the lock.
type signal struct {
	ch   chan struct{}
	last uint64
}

func newBroadcast() broadcast { return broadcast{cur: &signal{ch: make(chan struct{})}} }

// wait returns the channel closed at the next notify.
func (b *broadcast) wait() <-chan struct{} {
	b.taken = true
	return b.cur.ch
}

// signal returns the next notify's signal.
func (b *broadcast) signal() *signal {
	b.taken = true
	return b.cur
}

// notify wakes every waiter.
func (b *broadcast) notify() { b.notifyAt(0) }

// notifyAt wakes every waiter and tells them last.
func (b *broadcast) notifyAt(last uint64) {
	b.gen++
	if !b.taken {
		return
	}
	b.cur.last = last
	close(b.cur.ch)
	b.cur = &signal{ch: make(chan struct{})}
	b.taken = false
}

// since returns a channel closed at the next notify, or already closed
// if there was one after gen.
func (b *broadcast) since(gen uint64) <-chan struct{} {
	if b.gen != gen {
		return closed
	}
	return b.wait()
}

// generation is status's change counter and the wake of its long polls,
// with its own lock: a status long poll waits on it without status's
// lock, and dispatch notes a change under its own. Its lock is a leaf:
// nothing else is taken while it is held.
type generation struct {
	mu sync.Mutex
	b  broadcast
}

func newGeneration() *generation { return &generation{b: newBroadcast()} }

// note moves the generation and wakes its waiters.
func (g *generation) note() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.b.notify()
}

// current is the generation now.
func (g *generation) current() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.b.gen
}

// wait returns a channel closed at the next note.
func (g *generation) wait() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.b.wait()
}

// since returns a channel closed at the next note, or already closed if
// the generation moved past gen.
func (g *generation) since(gen uint64) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.b.since(gen)
}

// closed is a channel that is always closed.
var closed = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// readyFor returns machine's wake-up signal, made on first use. Called
// with mu.
func (d *dispatch) readyFor(machine string) *broadcast {
	b := d.ready[machine]
	if b == nil {
		nb := newBroadcast()
		b = &nb
		d.ready[machine] = b
	}
	return b
}

// wake tells machine's work polls to look again, once the entries in the
// log by now are applied. Called with mu.
func (d *dispatch) wake(machine string) {
	if b := d.ready[machine]; b != nil {
		d.wakeMachine(machine, b, d.logLast())
	}
}

// wakeMachine wakes machine's work polls (its ready broadcast b), telling
// them last, the log's last index, after it pushed the looks of those
// asleep (push); when push took every one, there is nobody left to
// signal. Called with mu.
func (d *dispatch) wakeMachine(machine string, b *broadcast, last uint64) {
	if d.looking {
		d.held = append(d.held, heldWake{machine, last})
		return
	}
	if d.push(machine, last) {
		return
	}
	b.notifyAt(last)
}

// logLast is the last index in the store's log, applied or not, or 0 if
// the store cannot tell (InFlight). A woken work poll lets the entries
// that were in the log when it was woken land before it looks (burst).
// It is read at the wake, not when the poll gets to run, so that a poll
// never waits for the results other agents sent for the same change.
func (d *dispatch) logLast() uint64 {
	if log, ok := d.store.(InFlight); ok {
		return log.LastIndex()
	}
	return 0
}

// wakeQueued wakes the machines that have queued units: a claim ended or
// a unit left the queue, and the wave that held them back may have moved.
// Machines with nothing queued have nothing to gain. Called with mu.
//
// It stops as soon as every machine that has polled is woken: the queue
// holds every unit still to run (all of them at the start of a deploy),
// and every settled unit's report calls it, so a full walk each time
// would make the leader's cost quadratic in the units.
func (d *dispatch) wakeQueued() {
	left := len(d.ready)
	if left == 0 || d.queue.Len() == 0 {
		return
	}
	// One set kept for every call and cleared after it: every settled
	// unit's report calls this, so it allocates nothing per call.
	seen := d.wokeQueued
	defer clear(seen)
	last := d.logLast()
	for name := range d.queue.All() {
		if left == 0 {
			return
		}
		v := d.stale.view(name)
		if v == nil || seen[v.machine] {
			continue
		}
		seen[v.machine] = true
		if b := d.ready[v.machine]; b != nil {
			d.wakeMachine(v.machine, b, last)
			left--
		}
	}
}

// wakeAll wakes every work poll: every view was rebuilt or dropped.
// Called with mu.
func (d *dispatch) wakeAll() {
	last := d.logLast()
	for machine, b := range d.ready {
		d.wakeMachine(machine, b, last)
	}
}

// burst lets the rest of a burst land after a wake, up to Window: the
// entries already in the store's log when the poll was woken (through
// last, the wake's logLast; other agents' results, the rest of an
// operator's change) are applied before the poll looks, so that one
// hand-out sees them all. Entries proposed later do not hold it: waiting
// for a quiet log would let every other agent's result delay the
// hand-out. A store that cannot say what is in its log gets the whole
// Window. It returns ctx's error if ctx ends first.
func (d *dispatch) burst(ctx context.Context, last uint64) error {
	deadline := time.Now().Add(d.opts.Window)
	log, ok := d.store.(InFlight)
	if !ok {
		t := time.NewTimer(d.opts.Window)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	}
	if last == 0 {
		// Woken by a notify that did not read the log.
		last = log.LastIndex()
	}
	for {
		// Read the index before asking: an entry applied in between
		// then ends the wait below at once rather than at the deadline.
		at := d.store.Index()
		if log.Applied(last) {
			return nil
		}
		wctx, cancel := context.WithDeadline(ctx, deadline)
		_, _, err := d.store.WaitIndex(wctx, at)
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil || !time.Now().Before(deadline):
			// The store closed, or the window is over: hand out what
			// there is; the claim itself reports a broken store.
			return nil
		}
	}
}

// heldWake is a wake that came during a look (dispatch.looking), made
// once the look is answered.
type heldWake struct {
	machine string
	last    uint64
}
