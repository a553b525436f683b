package engine

import (
	"time"

	"github.com/fixpoint/fixpoint/model"
)

// tally keeps what a status summary counts, unit by unit, between
// summaries, so that a summary recounts the units whose phase may have
// moved since the last one rather than every unit. A walk of every unit
// under the controller's lock cost about 1.3 µs per unit (131-172 ms at
// 100,000 units), paid by every waiter's poll after a change: an operator's
// `apply --wait` asked at the commit, and its walk took a core from the
// hand-outs of that very change (bench/agents' trace, bench/README.md).
//
// A unit's phase moves with its own record and its view (marked where
// the controller learns of them: refreshLocked, rebuilt) and with its
// claim, whose lease can end with no event at all: claimed units are
// recounted at every summary. Anything that may move every unit (a
// rebuild of every view, a machine lost) recounts all.
type tally struct {
	// all says every unit is recounted at the next summary.
	all bool
	// dirty are the units to recount besides the claimed ones.
	dirty map[string]struct{}
	// claimed are the units claimed at the last summary.
	claimed map[string]struct{}
	// units is what each unit was counted as.
	units    map[string]unitTally
	phases   PhaseCounts
	services map[string]*PhaseCounts
	// The units each list of a summary is chosen from: in error (lost
	// ones too), blocked on a machine that is not lost, and out of
	// settled (lost ones too).
	errors, blocked, out map[string]struct{}
	// recounted counts units recounted, for the tests that pin what a
	// summary costs.
	recounted int64
}

// unitTally is what one unit counts as in a summary.
type unitTally struct {
	service        string
	phase          string
	lost, blocking bool
}

// mark has the next summary recount unit name: its record or its view
// moved. Called with the controller's mu.
func (t *tally) mark(name string) {
	if t.all {
		return
	}
	if t.dirty == nil {
		t.dirty = map[string]struct{}{}
	}
	t.dirty[name] = struct{}{}
	if len(t.dirty) > len(t.units)/2+16 {
		// Recounting all is as cheap by then, and the set stays small.
		t.recountAll()
	}
}

// recountAll has the next summary recount every unit.
func (t *tally) recountAll() {
	t.all = true
	t.dirty = nil
}

// recountLocked brings the tally up to st and now. Called with mu, after
// refreshLocked.
func (c *Controller) recountLocked(st *model.State, now time.Time) {
	t := &c.tally
	if t.all || t.units == nil {
		*t = tally{recounted: t.recounted, units: make(map[string]unitTally, len(st.Units)),
			services: map[string]*PhaseCounts{}, errors: map[string]struct{}{}, blocked: map[string]struct{}{}, out: map[string]struct{}{}}
		for name := range st.Units {
			c.recountUnitLocked(st, name, now)
		}
	} else {
		for name := range t.dirty {
			c.recountUnitLocked(st, name, now)
		}
		for name := range t.claimed {
			if _, still := c.claims[name]; !still {
				c.recountUnitLocked(st, name, now)
			}
		}
		for name := range c.claims {
			c.recountUnitLocked(st, name, now)
		}
	}
	t.dirty = nil
	clear(t.claimed)
	if t.claimed == nil {
		t.claimed = map[string]struct{}{}
	}
	for name := range c.claims {
		t.claimed[name] = struct{}{}
	}
}

// recountUnitLocked takes unit name's old count out of the tally and puts
// its count now in.
func (c *Controller) recountUnitLocked(st *model.State, name string, now time.Time) {
	t := &c.tally
	t.recounted++
	if old, ok := t.units[name]; ok {
		t.phases.count(old.phase, old.lost, old.blocking, -1)
		t.services[old.service].count(old.phase, old.lost, old.blocking, -1)
		delete(t.units, name)
		delete(t.errors, name)
		delete(t.blocked, name)
		delete(t.out, name)
	}
	u := st.Units[name]
	if u == nil {
		return
	}
	cl := c.claims[name]
	n := unitTally{service: u.Service, phase: c.phaseLocked(name, u, cl, now), lost: lostOn(st, u), blocking: u.Status.State == "blocked"}
	t.units[name] = n
	t.phases.count(n.phase, n.lost, n.blocking, 1)
	sc := t.services[n.service]
	if sc == nil {
		sc = &PhaseCounts{}
		t.services[n.service] = sc
	}
	sc.count(n.phase, n.lost, n.blocking, 1)
	if n.blocking && !n.lost {
		t.blocked[name] = struct{}{}
	}
	if n.phase == Settled {
		c.settledMarkLocked(name, now)
		return
	}
	t.out[name] = struct{}{}
	if n.phase == Error {
		t.errors[name] = struct{}{}
	}
}
