package ledger

import (
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// runLog is the ledger's record of each unit's runs: how many times it
// was handed out since the views were last rebuilt (which decides
// whether its last universe is kept, schedule.KeepLast), and when it last
// ran, by machine, for the update-status timer (the rule is
// schedule.UpdateStatusDue), so that a claim looks only at its own
// machine's units. It is soft state, as claims are: a new leader starts
// every unit's timer afresh rather than waking them all at once. The
// ledger's lock guards it.
type runLog struct {
	count map[string]int
	last  map[string]map[string]time.Time
}

func newRunLog() runLog {
	return runLog{count: map[string]int{}, last: map[string]map[string]time.Time{}}
}

// handed counts a hand-out of unit.
func (r *runLog) handed(unit string) { r.count[unit]++ }

// forgetCounts starts every unit's hand-out count over.
func (r *runLog) forgetCounts() { r.count = map[string]int{} }

// forgetTimers starts every unit's timer over.
func (r *runLog) forgetTimers() { r.last = map[string]map[string]time.Time{} }

// ran records that unit, on machine, ran (or was first seen) at at.
func (r *runLog) ran(unit, machine string, at time.Time) {
	m := r.last[machine]
	if m == nil {
		m = map[string]time.Time{}
		r.last[machine] = m
	}
	m[unit] = at
}

// noteView keeps unit's timer entry under the machine its new view v
// names (old is the view it replaces, if any), starting it at now for a
// unit not seen before.
func (r *runLog) noteView(unit string, old, v *View, now time.Time) {
	oldMachine := v.Machine
	if old != nil {
		oldMachine = old.Machine
	}
	last, ok := r.last[oldMachine][unit]
	if ok && oldMachine != v.Machine {
		r.dropTimer(unit, oldMachine)
	}
	if !ok {
		last = now
	}
	r.ran(unit, v.Machine, last)
}

// dropTimer forgets unit's timer.
func (r *runLog) dropTimer(unit, machine string) {
	if m := r.last[machine]; m != nil {
		delete(m, unit)
		if len(m) == 0 {
			delete(r.last, machine)
		}
	}
}

// syncTimers drops the timers of units that have no view any more, after
// every view was rebuilt. Called with mu.
func (l *Ledger) syncTimers() {
	for machine, m := range l.runs.last {
		for unit := range m {
			if v := l.stale.View(unit); v == nil || v.Machine != machine {
				l.runs.dropTimer(unit, machine)
			}
		}
	}
}

// timerWork hands out, up to max, update-status runs to machine's units
// whose timer fired; it also returns when the next one fires. Called with
// mu, when the machine has nothing else to run: Juju too runs
// update-status only on an idle unit.
func (l *Ledger) timerWork(st *model.State, machine string, max int, now time.Time) ([]wire.Work, time.Time) {
	if l.opts.UpdateStatus <= 0 {
		return nil, time.Time{}
	}
	// The environment's model config (update-status-hook-interval)
	// overrides the server's interval; a server that turned the timer
	// off keeps it off.
	interval := l.opts.UpdateStatus
	if st.UpdateStatus > 0 {
		interval = time.Duration(st.UpdateStatus)
	}
	var due []string
	var next time.Time
	for name, last := range l.runs.last[machine] {
		u := st.Units[name]
		v, vs := l.stale.ViewOf(name)
		if u == nil || v == nil || l.queue.Has(name) || vs == ViewHashUnknown {
			continue
		}
		if cl := l.claims[name]; cl != nil && now.Before(cl.until) {
			continue
		}
		ok, at := schedule.UpdateStatusDue(st, u, v.Hash, last, interval, now)
		switch {
		case ok:
			due = append(due, name)
		case !at.IsZero() && (next.IsZero() || at.Before(next)):
			next = at
		}
	}
	charmapi.SortUnits(due)
	var ps []picked
	for _, name := range due {
		if max > 0 && len(ps) >= max {
			break
		}
		if l.stale.behind(name) != ViewCurrent {
			uni, seen := l.rebuild(st, name)
			// The rebuilt view may show it is not settled after all;
			// it is then queued for a run of its own.
			ok, _ := schedule.UpdateStatusDue(st, st.Units[name], l.stale.View(name).Hash, l.runs.last[machine][name], interval, now)
			if ok && uni != nil {
				ps = append(ps, picked{name, uni, seen})
			}
			continue
		}
		uni, seen := l.build.Build(st, name)
		l.counts.built.Add(1)
		ps = append(ps, picked{name, uni, seen})
	}
	return l.hand(st, machine, ps, now, true, nil), next
}
