package engine

import (
	"sync"
	"time"
)

// leaseGrain is the least time between two looks at the claims for
// expired leases: a steady stream of hand-outs has a lease ending every
// few milliseconds, and status waiters hear of them a little late rather
// than the controller walking its claims at that rate.
const leaseGrain = time.Second

// watchLease owes a watch of the leases that fires by until, the end of
// a claim's lease. Called with mu.
func (l *ledger) watchLease(until time.Time) {
	w := l.owe()
	if w.leaseBy.IsZero() || until.Before(w.leaseBy) {
		w.leaseBy = until
	}
}

// endedLeases says whether a claim's lease ended since seen, and when the
// next one ends (zero if none). Only the claims are walked, not the
// units: they are bounded by the hooks in flight. A lease that ended
// turns its unit from reconciling back to pending with no entry and no
// report, so nothing else would move the status generation; and the wave
// it held back may move: the wakes say so.
func (l *ledger) endedLeases(seen, now time.Time) (next time.Time, w *wakes) {
	l.lock()
	ended := false
	for _, cl := range l.claims {
		switch {
		case !now.Before(cl.until):
			ended = ended || cl.until.After(seen)
		case next.IsZero() || cl.until.Before(next):
			next = cl.until
		}
	}
	if ended {
		l.noteStatus()
		l.wakeQueued()
	}
	return next, l.unlock()
}

// leaseWatch fires when the earliest lease of a claim runs out, and has
// the ledger say which ended (expireLeases). Its lock is a leaf.
type leaseWatch struct {
	mu    sync.Mutex
	timer *time.Timer
	at    time.Time // when timer fires
	// seen is when the claims were last looked at: a lease that ended
	// after it has not been announced yet.
	seen time.Time
}

// by makes sure the watch calls fire by until.
func (w *leaseWatch) by(until, now time.Time, fire func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil && !w.at.After(until) {
		return
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	w.at = until
	w.timer = time.AfterFunc(until.Sub(now), fire)
}

// fired records that the watch fired at now and returns when the claims
// were looked at before.
func (w *leaseWatch) fired(now time.Time) (seen time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = nil
	seen, w.seen = w.seen, now
	return seen
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
