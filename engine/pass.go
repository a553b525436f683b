package engine

import (
	"time"

	"github.com/fixpoint/fixpoint/engine/ledger"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// servePass answers the looks of batch in one pass under the store's read
// lock and the ledger's, with their universes built ahead (buildAhead),
// and returns the looks left for the next pass and whether any look was
// handed work. Each look is answered as soon as its claim is made; the
// wakes the claims owe are applied once the ledger's lock is released,
// and reach the polls of this pass that found nothing with the others.
func (h *handout) servePass(batch []*pollLook) (rest []*pollLook, handed bool) {
	answered := 0
	var owed *ledger.Owed
	err := h.store.View(func(st *model.State) error {
		n, ahead := h.buildAhead(st, batch)
		batch, rest = batch[:n], batch[n:]
		owed = h.ledger.ClaimEach(st, ahead, func(claim func(machine string, max int) ([]wire.Work, time.Time)) {
			for _, l := range batch {
				if h.answer(l, claim) {
					handed = true
				}
				answered++
			}
		})
		return nil
	})
	h.apply(owed)
	for _, l := range batch[answered:] {
		// The store could not be read: every look of the pass reports
		// it.
		l.err = err
		close(l.done)
	}
	return rest, handed
}

// answer makes one poll's look, called with the ledger's lock and the
// store's read lock: it notes the contact, takes the machine's next
// signal and claims what may run. A poll that found work no longer counts
// as parked or polling before it is answered, so that it takes no lock
// after its answer; one that found nothing stays parked, so that a wake
// made from now on signals it. It says whether the look was handed work.
func (h *handout) answer(l *pollLook, claim func(machine string, max int) ([]wire.Work, time.Time)) (handed bool) {
	if !l.polling {
		h.contacts.PollStarted(l.machine)
		l.polling = true
	}
	h.contacts.Heard(l.machine, h.opts.Now())
	// Taken before the claim: a unit queued after this look wakes it.
	l.sig = h.waiters.Look(l.sleep)
	l.work, l.next = nil, time.Time{}
	if l.ctx == nil || l.ctx.Err() == nil {
		l.work, l.next = claim(l.machine, l.max)
	}
	handed = len(l.work) > 0
	if handed {
		// The poll ends with this answer.
		h.waiters.Found(l.sleep)
		h.contacts.PollEnded(l.machine)
		l.polling = false
	}
	close(l.done)
	return handed
}
