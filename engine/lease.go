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
