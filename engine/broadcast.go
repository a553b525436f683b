package engine

import (
	"context"
	"time"
)

// broadcast wakes everyone waiting for the next change: waiters take the
// channel from wait and block on it; notify closes it and starts the next
// one. The caller's lock guards it.
type broadcast struct {
	ch chan struct{}
	// gen counts notifies: a waiter that read gen with what it saw
	// learns of a notify it was not yet waiting for.
	gen uint64
}

func newBroadcast() broadcast { return broadcast{ch: make(chan struct{})} }

// wait returns the channel closed at the next notify.
func (b *broadcast) wait() <-chan struct{} { return b.ch }

// notify wakes every waiter.
func (b *broadcast) notify() {
	close(b.ch)
	b.ch = make(chan struct{})
	b.gen++
}

// since returns a channel closed at the next notify, or already closed
// if there was one after gen.
func (b *broadcast) since(gen uint64) <-chan struct{} {
	if b.gen != gen {
		return closed
	}
	return b.ch
}

// closed is a channel that is always closed.
var closed = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// readyFor returns machine's wake-up signal, made on first use. Called
// with mu.
func (c *Controller) readyFor(machine string) *broadcast {
	b := c.ready[machine]
	if b == nil {
		nb := newBroadcast()
		b = &nb
		c.ready[machine] = b
	}
	return b
}

// wake tells machine's work polls to look again. Called with mu.
func (c *Controller) wake(machine string) {
	if b := c.ready[machine]; b != nil {
		b.notify()
	}
}

// wakeQueued wakes the machines that have queued units: a claim ended or
// a unit left the queue, and the wave that held them back may have moved.
// Machines with nothing queued have nothing to gain. Called with mu.
//
// It stops as soon as every machine that has polled is woken: the queue
// holds every unit still to run, 100,000 at the start of a large deploy,
// and a full walk per settled unit made the leader's cost quadratic (89 %
// of its CPU in a profile at 100,000 units).
func (c *Controller) wakeQueued() {
	left := len(c.ready)
	seen := make(map[string]bool, left)
	for name := range c.queue.All() {
		if left == 0 {
			return
		}
		v := c.views[name]
		if v == nil || seen[v.machine] {
			continue
		}
		seen[v.machine] = true
		if b := c.ready[v.machine]; b != nil {
			b.notify()
			left--
		}
	}
}

// wakeAll wakes every work poll: every view was rebuilt or dropped.
// Called with mu.
func (c *Controller) wakeAll() {
	for _, b := range c.ready {
		b.notify()
	}
}

// burst lets the rest of a burst land after a wake, up to Window: the
// entries already in the store's log when the poll woke (other agents'
// results, the rest of an operator's change) are applied before the
// poll looks, so that one hand-out sees them all. Entries proposed later
// do not hold it: waiting for a quiet log would let every other agent's
// result delay the hand-out. A store that cannot say what is in its log
// gets the whole Window. It returns ctx's error if ctx ends first.
func (c *Controller) burst(ctx context.Context) error {
	deadline := time.Now().Add(c.opts.Window)
	log, ok := c.store.(InFlight)
	if !ok {
		t := time.NewTimer(c.opts.Window)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	}
	last := log.LastIndex()
	for {
		// Read the index before asking: an entry applied in between
		// then ends the wait below at once rather than at the deadline.
		at := c.store.Index()
		if log.Applied(last) {
			return nil
		}
		wctx, cancel := context.WithDeadline(ctx, deadline)
		_, _, err := c.store.WaitIndex(wctx, at)
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
