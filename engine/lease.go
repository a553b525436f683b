package engine

import "time"

// leaseGrain is the least time between two looks at the claims for
// expired leases: a steady stream of hand-outs has a lease ending every
// few milliseconds, and status waiters hear of them a little late rather
// than the controller walking its claims at that rate.
const leaseGrain = time.Second

// leaseWatch fires when the earliest lease of a claim runs out. A claim
// whose lease ends turns its unit from reconciling back to pending with no
// entry and no report, so nothing else would move the status generation;
// and the wave it held back may move.
type leaseWatch struct {
	timer *time.Timer
	at    time.Time // when timer fires
	// seen is when the claims were last looked at: a lease that ended
	// after it has not been announced yet.
	seen time.Time
}

// watchLeaseLocked makes sure the lease watch fires by until, the end of a
// claim's lease. Called with mu.
func (d *dispatch) watchLeaseLocked(until time.Time) {
	w := &d.lease
	if w.timer != nil && !w.at.After(until) {
		return
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	w.at = until
	w.timer = time.AfterFunc(until.Sub(d.opts.Now()), d.expireLeases)
}

// expireLeases tells status waiters and the machines with queued units of
// every lease that ended since it last looked, and watches for the next.
// Only the claims are walked, not the units: they are bounded by the hooks
// in flight.
func (d *dispatch) expireLeases() {
	d.lock()
	defer d.unlock()
	w := &d.lease
	w.timer = nil
	now := d.opts.Now()
	ended := false
	var next time.Time
	for _, cl := range d.claims {
		switch {
		case !now.Before(cl.until):
			ended = ended || cl.until.After(w.seen)
		case next.IsZero() || cl.until.Before(next):
			next = cl.until
		}
	}
	w.seen = now
	if ended {
		d.stat.changed.note()
		d.wakeQueued()
	}
	if !next.IsZero() {
		d.watchLeaseLocked(maxTime(next, now.Add(leaseGrain)))
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
