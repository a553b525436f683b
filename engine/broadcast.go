package engine

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
func (c *Controller) wakeQueued() {
	woken := map[string]bool{}
	for name := range c.queue.All() {
		if v := c.views[name]; v != nil && !woken[v.machine] {
			woken[v.machine] = true
			c.wake(v.machine)
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
