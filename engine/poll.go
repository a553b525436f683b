package engine

import (
	"context"
	"time"

	"github.com/fixpoint/fixpoint/engine/wire"
)

// waitForWork is Controller.WaitForWork: a long poll of machine's agent
// for work.
//
// Each look at the machine's work is made in a pass (pass.go), batched
// with the looks of the polls woken with it. A sleeping poll's look is
// queued by the wake itself when everything in the log at the wake is
// applied (waiters.Wake pushes it); otherwise the woken poll first lets
// those entries land (burst).
func (h *handout) waitForWork(ctx context.Context, machine string, max int, wait time.Duration) ([]wire.Work, error) {
	deadline := h.opts.Now().Add(wait)
	l := &pollLook{machine: machine, max: max, ctx: ctx}
	l.sleep = h.waiters.NewPoll(machine, l)
	defer func() {
		if !l.polling {
			// The look that found work ended the poll's counts.
			return
		}
		h.contacts.PollEnded(machine)
		h.waiters.End(l.sleep)
		h.contacts.Heard(machine, h.opts.Now())
	}()
	answered := false
	for {
		if !answered {
			l.done = make(chan struct{})
			h.passes.Add(l)
			<-l.done
		}
		answered = false
		if len(l.work) > 0 && ctx.Err() != nil {
			// The poller left before its answer: no agent gets this
			// work, so it is handed out again now rather than held
			// until a heartbeat drops it (ledger.ClaimGrace).
			h.apply(h.ledger.GiveBack(machine, l.work))
			return nil, ctx.Err()
		}
		if l.err != nil || len(l.work) > 0 {
			return l.work, l.err
		}
		now := h.opts.Now()
		if !now.Before(deadline) {
			return nil, nil
		}
		sleep := deadline.Sub(now)
		if !l.next.IsZero() && l.next.Sub(now) < sleep {
			sleep = l.next.Sub(now)
		}
		t := time.NewTimer(sleep) // a negative sleep fires at once
		// Read before Sleep: once asleep, a pushed look's pass writes
		// the look.
		sig := l.sig
		done := make(chan struct{})
		l.done = done
		h.waiters.Sleep(l.sleep)
		signalled := false
		select {
		case <-ctx.Done():
		case <-t.C:
		case <-sig.C():
			signalled = true
		case <-done:
			// Pushed, and answered: a wake that pushed every poll of
			// the machine signals none of them.
		}
		t.Stop()
		if h.waiters.Awake(l.sleep, signalled) {
			// A wake pushed the look: the pass answers it as if the
			// poll had looked.
			if signalled {
				select {
				case <-done:
					// Answered: a signal after the answer woke
					// nobody twice.
				default:
					h.waiters.WokenTwice()
				}
			}
			<-done
			answered = true
			continue
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if signalled {
			// Let the rest of a burst land before handing work out:
			// the entries in the log when the poll was woken.
			if err := h.burst(ctx, sig.Last()); err != nil {
				return nil, err
			}
		}
	}
}

// look is Controller.Look: one look of machine's poll, queued for a
// pass, its counts ended with it.
func (h *handout) look(ctx context.Context, machine string, max int) ([]wire.Work, time.Time, error) {
	l := &pollLook{machine: machine, max: max, ctx: ctx, done: make(chan struct{})}
	l.sleep = h.waiters.NewPoll(machine, l)
	defer func() {
		if l.polling {
			h.contacts.PollEnded(machine)
			h.waiters.End(l.sleep)
			h.contacts.Heard(machine, h.opts.Now())
		}
	}()
	h.passes.Add(l)
	<-l.done
	if len(l.work) > 0 && ctx.Err() != nil {
		// The poller left before its answer (waitForWork).
		h.apply(h.ledger.GiveBack(machine, l.work))
		return nil, time.Time{}, ctx.Err()
	}
	return l.work, l.next, l.err
}

// burst lets the rest of a burst land after a wake, up to Window: the
// entries already in the store's log when the poll was woken (through
// last, the log's last index at the wake; other agents' results, the rest
// of an operator's change) are applied before the poll looks, so that one
// hand-out sees them all. Entries proposed later do not hold it: waiting
// for a quiet log would let every other agent's result delay the
// hand-out. A store that cannot say what is in its log gets the whole
// Window. It returns ctx's error if ctx ends first.
func (h *handout) burst(ctx context.Context, last uint64) error {
	deadline := time.Now().Add(h.opts.Window)
	log, ok := h.store.(InFlight)
	if !ok {
		t := time.NewTimer(h.opts.Window)
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
		at := h.store.Index()
		if log.Applied(last) {
			return nil
		}
		wctx, cancel := context.WithDeadline(ctx, deadline)
		_, _, err := h.store.WaitIndex(wctx, at)
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
