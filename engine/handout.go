package engine

import (
	"sync"
	"time"

	"github.com/fixpoint/fixpoint/model"
)

// look is one work poll's look at its machine's work: what it asks, and
// what the look found. The poll hands it to lookQueue.do and reads the
// answer once do returns.
type look struct {
	machine string
	max     int
	// woken says the poll was woken by its machine's signal (counted in
	// WorkStats.Wakeups when it looks).
	woken bool
	// parked says the poll is counted in Controller.parked; the look
	// un-parks it, and parks it again if it found nothing.
	parked bool
	// polling says the poll is counted in Controller.polling: from its
	// first look to the look that finds work, which ends the count in
	// the same pass. Ending it after the answer took the controller's
	// lock once more per poll, in a queue behind the whole batch.
	polling bool

	work []Work
	next time.Time
	sig  *signal
	err  error
	done chan struct{}
}

// lookQueue batches the looks of work polls that arrive together: one
// goroutine serves every look queued, all of them in one pass under the
// store's read lock and the controller's lock, and answers each as soon
// as its claim is made. A change of a 100-unit service wakes 100 polls at
// once; looking one poll at a time, each took the controller's lock in
// turn, and every hand-over of that lock waited for the next poll's
// goroutine to be scheduled: the 100th poll got its work 60 ms after the
// commit for ~15 ms of claims (bench/agents, "Agents waking" in
// bench/README.md).
type lookQueue struct {
	mu      sync.Mutex
	pending []*look
	serving bool
}

// do queues l and returns once it is answered. It starts the server of
// the queue if none runs.
func (q *lookQueue) do(c *Controller, l *look) {
	l.done = make(chan struct{})
	q.mu.Lock()
	q.pending = append(q.pending, l)
	start := !q.serving
	q.serving = true
	q.mu.Unlock()
	if start {
		go q.serve(c)
	}
	<-l.done
}

// serve answers the queued looks, a pass at a time, until none is left.
// Each pass holds the store's read lock only for the looks queued when
// it began, so that entries (other agents' results) are applied between
// passes.
func (q *lookQueue) serve(c *Controller) {
	for {
		q.mu.Lock()
		batch := q.pending
		q.pending = nil
		if len(batch) == 0 {
			q.serving = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		answered := 0
		err := c.store.View(func(st *model.State) error {
			c.mu.Lock()
			defer c.mu.Unlock()
			for _, l := range batch {
				c.lookLocked(st, l)
				close(l.done)
				answered++
			}
			return nil
		})
		for _, l := range batch[answered:] {
			// The store could not be read: every look of the pass
			// reports it.
			l.err = err
			close(l.done)
		}
	}
}

// lookLocked is one poll's look, called with mu and the store's read
// lock: it notes the contact, un-parks the poll, takes the machine's next
// signal and claims what may run; a poll that found nothing is parked
// again before the lock is released, so that a test (or status) sees it
// asleep as soon as it is, and one that found work is no longer counted
// as polling.
func (c *Controller) lookLocked(st *model.State, l *look) {
	if !l.polling {
		c.polling[l.machine]++
		l.polling = true
	}
	c.contact[l.machine] = c.opts.Now()
	if l.parked {
		c.parked[l.machine]--
		l.parked = false
	}
	if l.woken {
		c.work.Wakeups++
	}
	// Taken in the same pass as the claim: a unit queued after this
	// look closes it.
	l.sig = c.readyFor(l.machine).signal()
	l.work, l.next = c.claimLocked(st, l.machine, l.max)
	if len(l.work) == 0 {
		c.parked[l.machine]++
		l.parked = true
		return
	}
	// The poll ends with this answer.
	c.polling[l.machine]--
	l.polling = false
}
