package engine

import (
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// The update-status timer's bookkeeping (the rule is
// schedule.UpdateStatusDue): when each unit last ran, by machine, so that
// a claim looks only at its own machine's units. It is soft state, as
// claims are: a new leader starts every unit's timer afresh rather than
// waking them all at once.

// noteRan records that unit, on machine, ran (or was first seen) at at.
// Called with mu.
func (d *dispatch) noteRan(unit, machine string, at time.Time) {
	m := d.lastRun[machine]
	if m == nil {
		m = map[string]time.Time{}
		d.lastRun[machine] = m
	}
	m[unit] = at
}

// noteView keeps unit's timer entry under the machine its new view v
// names (old is the view it replaces, if any), starting it at now for a
// unit not seen before. Called with mu.
func (d *dispatch) noteView(unit string, old, v *view, now time.Time) {
	oldMachine := v.machine
	if old != nil {
		oldMachine = old.machine
	}
	last, ok := d.lastRun[oldMachine][unit]
	if ok && oldMachine != v.machine {
		d.dropTimer(unit, oldMachine)
	}
	if !ok {
		last = now
	}
	d.noteRan(unit, v.machine, last)
}

// dropTimer forgets unit's timer. Called with mu.
func (d *dispatch) dropTimer(unit, machine string) {
	if m := d.lastRun[machine]; m != nil {
		delete(m, unit)
		if len(m) == 0 {
			delete(d.lastRun, machine)
		}
	}
}

// syncTimers drops the timers of units that have no view any more, after
// every view was rebuilt. Called with mu.
func (d *dispatch) syncTimers() {
	for machine, m := range d.lastRun {
		for unit := range m {
			if v := d.stale.view(unit); v == nil || v.machine != machine {
				d.dropTimer(unit, machine)
			}
		}
	}
}

// timerWork hands out, up to max, update-status runs to machine's units
// whose timer fired; it also returns when the next one fires. Called with
// mu, when the machine has nothing else to run: Juju too runs
// update-status only on an idle unit.
func (d *dispatch) timerWork(st *model.State, machine string, max int, now time.Time) ([]wire.Work, time.Time) {
	if d.opts.UpdateStatus <= 0 {
		return nil, time.Time{}
	}
	var due []string
	var next time.Time
	for name, last := range d.lastRun[machine] {
		u := st.Units[name]
		v, vs := d.stale.viewOf(name)
		if u == nil || v == nil || d.queue.Has(name) || vs == viewHashUnknown {
			continue
		}
		if cl := d.claims[name]; cl != nil && now.Before(cl.until) {
			continue
		}
		ok, at := schedule.UpdateStatusDue(st, u, v.hash, last, d.opts.UpdateStatus, now)
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
		if d.stale.behind(name) != viewCurrent {
			uni, seen := d.rebuild(st, name)
			// The rebuilt view may show it is not settled after all;
			// it is then queued for a run of its own.
			ok, _ := schedule.UpdateStatusDue(st, st.Units[name], d.stale.view(name).hash, d.lastRun[machine][name], d.opts.UpdateStatus, now)
			if ok && uni != nil {
				ps = append(ps, picked{name, uni, seen})
			}
			continue
		}
		uni, seen := Build(st, name)
		d.work.Built++
		ps = append(ps, picked{name, uni, seen})
	}
	return d.hand(st, machine, ps, now, true), next
}
