package engine

import (
	"fmt"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/model"
)

// view is what the controller keeps of one unit's universe at its index:
// the hash, not the universe. Universes are built when they are handed
// out, held by the claim until the result comes back, and dropped: the
// memory they take is bounded by the hooks in flight, not by the
// environment: a view never holds a universe or its Seen record, which
// grow with the members each unit sees.
type view struct {
	hash    string
	machine string
	member  bool // placed on a registered machine
}

// viewState says how far a view is behind the state.
type viewState uint8

const (
	viewCurrent viewState = iota
	// viewLacksOwnWrites: the unit's own settings or state moved. Its
	// hash, which leaves those out, still holds; the universe it is
	// handed (built at hand-out, as always) must carry them.
	viewLacksOwnWrites
	// viewHashUnknown: something the unit sees changed: it is stale, and
	// its hash is unknown until rebuilt.
	viewHashUnknown
)

// Refresh brings the cached universes up to the store's applied index.
func (c *Controller) Refresh() error {
	return c.store.View(func(st *model.State) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.refreshLocked(st)
		return nil
	})
}

// refreshLocked brings the views up to st and acts on what moved: the
// queue, the wakes, the status counts. The caller holds mu and the
// store's read lock, so views and state agree. A gap in the state's
// journal (a restart, a restore, an operator change) rebuilds every view.
func (c *Controller) refreshLocked(st *model.State) {
	n, moved := c.stale.refresh(st)
	if !moved {
		return
	}
	if n.rebuild {
		// Rebuilding requeues every unit that needs a run, which wakes its
		// machine; the others sleep on.
		c.rebuildAll(st)
	} else {
		for _, name := range n.self {
			// Its wave, error or life moved: the queue's index looks
			// at it again, queued or not (a claim holds a wave too).
			c.disp.queue.Touch(name)
			c.stat.tally.mark(name)
		}
		for _, name := range n.lacking {
			c.requeue(st, name)
		}
		for _, u := range n.gone {
			c.stat.tally.mark(u.name)
			if u.view != nil {
				c.dropTimer(u.name, u.view.machine)
			}
			c.disp.queue.Forget(u.name)
		}
		for _, u := range n.stale {
			c.stat.tally.mark(u.name)
			c.disp.queue.Add(u.name)
			if u.view != nil {
				c.wake(u.view.machine)
			}
		}
		if n.waves {
			// An operator change that a full rebuild used to follow:
			// the run counts start over as they did then, and the
			// queued units, whose waves are 0 again, may run sooner.
			c.disp.runs = map[string]int{}
			c.disp.queue.Rewave()
			c.touchClaims()
			c.wakeQueued()
		}
	}
	if n.actions || n.rebuild {
		c.wakeForActions(st)
	}
	c.stale.caughtUp(st)
	c.stat.changed.note()
}

// rebuildAll rebuilds every view.
func (c *Controller) rebuildAll(st *model.State) {
	c.stale.reset(len(st.Units))
	c.stat.tally.recountAll()
	c.disp.queue.Clear()
	c.disp.runs = map[string]int{}
	for name := range st.Units {
		// Only the hash is kept: the universe is garbage at once, so a
		// new leader of 10,000 units never holds them all.
		c.rebuild(st, name)
	}
	for name := range c.disp.claims {
		if c.stale.view(name) == nil {
			delete(c.disp.claims, name)
		}
	}
	// The queue's index started over with the queue; claims hold waves
	// too.
	c.touchClaims()
	c.stale.pruneLast()
	c.syncTimers()
}

// touchClaims has the queue's index look at every claimed unit again.
// Called with mu.
func (c *Controller) touchClaims() {
	for name := range c.disp.claims {
		c.disp.queue.Touch(name)
	}
}

// rebuild rebuilds one unit's view and its place in the queue, and
// returns the universe it hashed (nil if the unit is gone) with the Seen
// record its reconcile leaves; the view keeps neither.
func (c *Controller) rebuild(st *model.State, name string) (*charmapi.Universe, *model.Seen) {
	if _, ok := st.Units[name]; !ok {
		if old := c.stale.drop(name); old != nil {
			c.dropTimer(name, old.machine)
		}
		c.stat.tally.mark(name)
		c.disp.queue.Forget(name)
		return nil, nil
	}
	uni, seen, h, n := buildHashed(st, name)
	return c.rebuilt(st, name, uni, seen, h, n)
}

// rebuilt installs the view of a unit of st from its universe uni, built
// and hashed (h, n bytes) by rebuild or ahead of a hand-out (prebuild),
// and returns uni and seen.
func (c *Controller) rebuilt(st *model.State, name string, uni *charmapi.Universe, seen *model.Seen, h string, n int) (*charmapi.Universe, *model.Seen) {
	u := st.Units[name]
	v := &view{hash: h, machine: u.Machine, member: schedule.Member(st, u)}
	old := c.stale.install(name, v)
	c.noteView(name, old, v, c.opts.Now())
	c.stat.tally.mark(name)
	if u.Error != nil {
		// Its phase follows its view (errorStands): pending while what
		// it sees is unknown, in error again if that turned out the
		// universe that failed. Status long polls look again.
		c.stat.changed.note()
	}
	c.work.Rebuilt++
	c.work.HashedBytes += int64(n)
	c.requeue(st, name)
	return uni, seen
}

// requeue puts a unit in the queue if it may need a run, with the wait the
// state says, and takes it out if not.
func (c *Controller) requeue(st *model.State, name string) {
	u, v := st.Units[name], c.stale.view(name)
	if u == nil || v == nil {
		c.disp.queue.Forget(name)
		return
	}
	if schedule.NeedsRun(u, v.hash) {
		c.disp.queue.Set(name, schedule.NotBefore(u, v.hash))
		c.wake(v.machine)
	} else if c.disp.queue.Forget(name) {
		// It may have held the lowest wave: whoever waits looks again.
		c.stat.changed.note()
		c.wakeQueued()
	}
}

// currentView brings unit's view up to st and returns it with the
// universe it stands for and the Seen record that universe's reconcile
// leaves, or nil if the unit is gone. The caller holds the universe only
// as long as it needs it. Called with mu.
func (c *Controller) currentView(st *model.State, unit string) (*view, *charmapi.Universe, *model.Seen) {
	c.refreshLocked(st)
	if c.stale.behind(unit) != viewCurrent {
		uni, seen := c.rebuild(st, unit)
		return c.stale.view(unit), uni, seen
	}
	v := c.stale.view(unit)
	if v == nil {
		return nil, nil, nil
	}
	uni, seen := Build(st, unit)
	c.work.Built++
	return v, uni, seen
}

// Universe returns what unit's hook would be given now, events included.
func (c *Controller) Universe(unit string) (*charmapi.Universe, error) {
	var out *charmapi.Universe
	err := c.store.View(func(st *model.State) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		v, built, seen := c.currentView(st, unit)
		if st.Units[unit] == nil {
			return NoUnitError(st, unit)
		}
		if v == nil || built == nil {
			return fmt.Errorf("unit %s does not exist (units: %d in the environment)", unit, len(st.Units))
		}
		uni := schedule.RunUniverse(st, st.Units[unit], built, v.hash, seen)
		out = &uni
		return nil
	})
	return out, err
}
