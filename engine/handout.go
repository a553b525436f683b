package engine

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/ledger"
	"github.com/fixpoint/fixpoint/engine/liveness"
	"github.com/fixpoint/fixpoint/engine/passq"
	"github.com/fixpoint/fixpoint/engine/waiters"
	"github.com/fixpoint/fixpoint/model"
)

// handout is the pipeline from the ledger to the agents and back: work
// polls sleep in waiters until a wake, their looks are served a pass at
// a time (passes), each claiming from the ledger, and the reports close
// the claims. It owns no lock of its own but the lease watch's: every
// change of the ledger returns the wakes it owes, which handout applies
// once the ledger's lock is released (apply).
type handout struct {
	store    Store
	opts     *Options
	ledger   *ledger.Ledger
	waiters  *waiters.Waiters[*pollLook]
	passes   *passq.Queue[*pollLook]
	contacts *liveness.Contacts
	leases   leaseWatch
	// shared counts the polls this controller's wakes woke on the
	// fleet's shared signals (Options.Machines).
	shared atomic.Int64
	// aheadMean is the mean size of the last pass's universes built
	// ahead, encoded (0 before one): it sizes the next (aheadBound).
	aheadMean atomic.Int64
}

// apply makes the wakes a change of the ledger owes, with the ledger's
// lock released: status's long polls, the lease watch, and the work polls
// of the machines named. The log is read before the waiters' lock is
// taken, and only if a poll to wake is asleep: a report wakes the
// machines of every queued unit, most of them running hooks, and the
// store answers an index still in flight by reading the log.
func (h *handout) apply(w *ledger.Owed) {
	if w == nil {
		return
	}
	defer w.Done()
	if !w.LeaseBy.IsZero() {
		h.leases.by(w.LeaseBy, w.LeaseAt, h.expireLeases)
	}
	if !w.Wakes() {
		return
	}
	log, inFlight := h.store.(InFlight)
	var last uint64
	if inFlight {
		last = log.LastIndex()
	}
	applied := inFlight && last > 0 && h.waiters.Asleep(w.Machines, w.All) && log.Applied(last)
	h.passes.Add(h.waiters.Wake(w.Machines, w.All, last, applied)...)
	if h.opts.Machines != nil {
		h.shared.Add(int64(h.opts.Machines.Wake(w.Machines, w.All, last)))
	}
}

// expireLeases has the ledger announce the leases that ended since it
// last looked, and watches for the next.
func (h *handout) expireLeases() {
	now := h.opts.Now()
	next, w := h.ledger.EndedLeases(h.leases.fired(now), now)
	h.apply(w)
	if !next.IsZero() {
		h.leases.by(maxTime(next, now.Add(leaseGrain)), now, h.expireLeases)
	}
}

// refresh brings the views up to the store's applied index.
func (h *handout) refresh() error {
	var w *ledger.Owed
	err := h.store.View(func(st *model.State) error {
		w = h.ledger.Refresh(st)
		return nil
	})
	h.apply(w)
	return err
}

// follow keeps the views up to the state until ctx ends, on the leader
// only (Options.IsLeader): a follower keeps no views up to date that
// nobody asks for, and builds them afresh if it is asked (a stale
// status) or becomes the leader.
func (h *handout) follow(ctx context.Context) error {
	for {
		if h.opts.IsLeader == nil || h.opts.IsLeader() {
			if err := h.refresh(); err != nil {
				return err
			}
		} else {
			h.apply(h.ledger.Forget())
		}
		at := h.store.Index()
		_, reset, err := h.store.WaitIndex(ctx, at)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("controller: watch state: %w", err)
		}
		if reset {
			h.apply(h.ledger.Forget())
		}
	}
}

// release gives up every claim of machine's agent.
func (h *handout) release(machine string) {
	h.contacts.Heard(machine, h.opts.Now())
	h.apply(h.ledger.Release(machine))
}

// releaseExcept drops machine's claims on units other than running.
func (h *handout) releaseExcept(machine string, running []string) {
	h.apply(h.ledger.ReleaseExcept(machine, running))
}

// heartbeat records that machine's agent is alive.
func (h *handout) heartbeat(machine string) { h.contacts.Heard(machine, h.opts.Now()) }

// stats returns the work counted so far.
func (h *handout) stats() WorkStats {
	lc := h.ledger.Counts()
	w := WorkStats{Rebuilt: lc.Rebuilt, HashedBytes: lc.HashedBytes, Built: lc.Built, PeakClaims: lc.PeakClaims, Prebuilt: lc.Prebuilt}
	ws := h.waiters.Stats()
	w.Wakeups, w.Pushed, w.WokenTwice, w.Asleep = ws.Wakeups+h.shared.Load(), ws.Pushed, ws.WokenTwice, ws.Asleep
	w.Passes = h.passes.Passes()
	return w
}

// claimsAt brings the views up to st and returns a snapshot of every
// claim, for status. The caller holds the store's read lock.
func (h *handout) claimsAt(st *model.State) map[string]ledger.ClaimSnapshot {
	snap, w := h.ledger.Refreshed(st)
	h.apply(w)
	return snap
}

// current is ledger.current, its wakes applied.
func (h *handout) current(st *model.State, unit string) (*ledger.View, *charmapi.Universe, *model.Seen, map[string]ledger.ClaimSnapshot) {
	v, uni, seen, snap, w := h.ledger.Current(st, unit)
	h.apply(w)
	return v, uni, seen, snap
}
