package engine

import (
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/wire"
)

// The update-status timer's bookkeeping (the rule is
// schedule.UpdateStatusDue): when each unit last ran, by machine, so that
// a claim looks only at its own machine's units. It is soft state, as
// claims are: a new leader starts every unit's timer afresh rather than
// waking them all at once.

// noteRan records that unit, on machine, ran (or was first seen) at at.
// Called with mu.
func (c *Controller) noteRan(unit, machine string, at time.Time) {
	m := c.disp.lastRun[machine]
	if m == nil {
		m = map[string]time.Time{}
		c.disp.lastRun[machine] = m
	}
	m[unit] = at
}

// noteView keeps unit's timer entry under the machine its new view v
// names (old is the view it replaces, if any), starting it at now for a
// unit not seen before. Called with mu.
func (c *Controller) noteView(unit string, old, v *view, now time.Time) {
	oldMachine := v.machine
	if old != nil {
		oldMachine = old.machine
	}
	last, ok := c.disp.lastRun[oldMachine][unit]
	if ok && oldMachine != v.machine {
		c.dropTimer(unit, oldMachine)
	}
	if !ok {
		last = now
	}
	c.noteRan(unit, v.machine, last)
}

// dropTimer forgets unit's timer. Called with mu.
func (c *Controller) dropTimer(unit, machine string) {
	if m := c.disp.lastRun[machine]; m != nil {
		delete(m, unit)
		if len(m) == 0 {
			delete(c.disp.lastRun, machine)
		}
	}
}

// syncTimers drops the timers of units that have no view any more, after
// every view was rebuilt. Called with mu.
func (c *Controller) syncTimers() {
	for machine, m := range c.disp.lastRun {
		for unit := range m {
			if v := c.stale.view(unit); v == nil || v.machine != machine {
				c.dropTimer(unit, machine)
			}
		}
	}
}

// timerWork hands out, up to max, update-status runs to machine's units
// whose timer fired; it also returns when the next one fires. Called with
// mu, when the machine has nothing else to run: Juju too runs
// update-status only on an idle unit.
func (c *Controller) timerWork(st *model.State, machine string, max int, now time.Time) ([]wire.Work, time.Time) {
	if c.opts.UpdateStatus <= 0 {
		return nil, time.Time{}
	}
	var due []string
	var next time.Time
	for name, last := range c.disp.lastRun[machine] {
		u, v := st.Units[name], c.stale.view(name)
		if u == nil || v == nil || c.disp.queue.Has(name) || c.stale.behind(name) == viewHashUnknown {
			continue
		}
		if cl := c.disp.claims[name]; cl != nil && now.Before(cl.until) {
			continue
		}
		ok, at := schedule.UpdateStatusDue(st, u, v.hash, last, c.opts.UpdateStatus, now)
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
		if c.stale.behind(name) != viewCurrent {
			uni, seen := c.rebuild(st, name)
			// The rebuilt view may show it is not settled after all;
			// it is then queued for a run of its own.
			ok, _ := schedule.UpdateStatusDue(st, st.Units[name], c.stale.view(name).hash, c.disp.lastRun[machine][name], c.opts.UpdateStatus, now)
			if ok && uni != nil {
				ps = append(ps, picked{name, uni, seen})
			}
			continue
		}
		uni, seen := Build(st, name)
		c.work.Built++
		ps = append(ps, picked{name, uni, seen})
	}
	return c.hand(st, machine, ps, now, true), next
}
