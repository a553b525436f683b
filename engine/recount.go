package engine

import (
	"iter"
	"time"

	"github.com/fixpoint/fixpoint/model"
)

// recountLocked brings the tally up to st and now, and says whether it
// holds a count per unit; if not (busy), the summary counts every unit as
// it walks them (walkLocked). Called with mu, the views brought up to st
// (handout.claimsAt).
func (ss *statusState) recountLocked(st *model.State, now time.Time) (held bool) {
	t := &ss.tally
	t.takeIn(&ss.inbox)
	if !t.all && t.units != nil {
		for name := range t.dirty {
			ss.recountUnitLocked(st, name, now)
		}
		for name := range t.claimed {
			if _, still := ss.claims[name]; !still {
				ss.recountUnitLocked(st, name, now)
			}
		}
		for name := range ss.claims {
			ss.recountUnitLocked(st, name, now)
		}
	}
	// A unit counted and gone without a rebuild of every view (which
	// the journal does not allow) starts it over too.
	if t.all || t.units == nil {
		if t.busy {
			t.dirty = nil
			return false
		}
		t.start(len(st.Units))
		for name, u := range st.Units {
			ss.countUnitLocked(st, name, u, now)
		}
		t.busy = 2*len(t.out) > len(t.units)
	}
	t.dirty = nil
	clear(t.claimed)
	if t.claimed == nil {
		t.claimed = map[string]struct{}{}
	}
	for name := range ss.claims {
		t.claimed[name] = struct{}{}
	}
	return true
}

// walkLocked yields every unit as it counts now and counts it in s: the
// summary of a busy tally, which keeps no count per unit: while most
// units move at once (a first convergence), counting afresh costs less
// than keeping a count per unit.
func (ss *statusState) walkLocked(st *model.State, now time.Time, s *Summary) iter.Seq2[string, unitTally] {
	return func(yield func(string, unitTally) bool) {
		t := &ss.tally
		for name, u := range st.Units {
			t.recounted++
			n := ss.unitTallyLocked(st, name, u, now)
			n.count(&s.Phases, 1)
			if sc := s.Services[u.Service]; sc != nil {
				n.count(&sc.PhaseCounts, 1)
			}
			if !yield(name, n) {
				return
			}
		}
		// Settled again: the next summary counts and keeps.
		t.busy = 2*(s.Phases.Units-s.Phases.Settled) > s.Phases.Units
	}
}

// listedLocked yields the units a held tally's lists are chosen from:
// those out of settled, the blocked ones and those on lost machines, each
// once.
func (ss *statusState) listedLocked() iter.Seq2[string, unitTally] {
	return func(yield func(string, unitTally) bool) {
		t := &ss.tally
		for name := range t.out {
			if !yield(name, t.units[name]) {
				return
			}
		}
		for name := range t.blocked {
			if _, out := t.out[name]; !out && !yield(name, t.units[name]) {
				return
			}
		}
		for name := range t.lost {
			_, out := t.out[name]
			_, blocked := t.blocked[name]
			if !out && !blocked && !yield(name, t.units[name]) {
				return
			}
		}
	}
}

// recountUnitLocked takes unit name's old count out of the tally and puts
// its count now in.
func (ss *statusState) recountUnitLocked(st *model.State, name string, now time.Time) {
	t := &ss.tally
	u := st.Units[name]
	if old, ok := t.units[name]; ok {
		if u == nil {
			t.all = true
			return
		}
		old.count(&t.phases, -1)
		old.count(t.services[u.Service], -1)
		delete(t.units, name)
		delete(t.blocked, name)
		delete(t.out, name)
		delete(t.lost, name)
	}
	if u != nil {
		ss.countUnitLocked(st, name, u, now)
	}
}

// countUnitLocked puts unit name, not counted, in the tally.
func (ss *statusState) countUnitLocked(st *model.State, name string, u *model.Unit, now time.Time) {
	t := &ss.tally
	t.recounted++
	n := ss.unitTallyLocked(st, name, u, now)
	t.units[name] = n
	n.count(&t.phases, 1)
	sc := t.services[u.Service]
	if sc == nil {
		sc = &PhaseCounts{}
		t.services[u.Service] = sc
	}
	n.count(sc, 1)
	if n&tallyBlocked != 0 && n&tallyLost == 0 {
		t.blocked[name] = struct{}{}
	}
	if n.phase() != Settled {
		t.out[name] = struct{}{}
	}
	if n&tallyLost != 0 {
		t.lost[name] = struct{}{}
	}
}

// unitTallyLocked is what unit name counts as now.
func (ss *statusState) unitTallyLocked(st *model.State, name string, u *model.Unit, now time.Time) unitTally {
	phase := ss.phaseLocked(name, u, ss.claims[name], now)
	if phase == Settled {
		ss.noteSettledLocked(name, now)
	}
	return newUnitTally(phase, lostOn(st, u), u.Status.State == "blocked")
}
