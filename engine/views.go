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

// refreshLocked brings the views up to st; the caller holds mu and the
// store's read lock, so views and state agree. Only the universes that can
// see what changed are rebuilt; a gap in the state's journal (a restart, a
// restore, an operator change) rebuilds them all.
func (c *Controller) refreshLocked(st *model.State) {
	if st.Index == c.stale.index && c.stale.views != nil {
		return
	}
	changes, ok := st.ChangesSince(c.stale.index)
	for _, t := range changes {
		ok = ok && !t.All
	}
	if !ok || c.stale.views == nil {
		// Rebuilding requeues every unit that needs a run, which wakes its
		// machine; the others sleep on.
		c.rebuildAll(st)
	} else {
		affected, self := map[string]bool{}, map[string]bool{}
		waves := false
		for _, t := range changes {
			for _, ub := range t.Settings {
				c.watchers(st, ub.Unit, ub.Relation, affected)
			}
			for _, id := range t.Apps {
				if r := st.Relations[id]; r != nil {
					for _, e := range r.Endpoints {
						for _, u := range st.UnitsOf(e.Service) {
							affected[u.Name] = true
						}
					}
				}
			}
			for _, svc := range t.LeaderData {
				for _, u := range st.UnitsOf(svc) {
					affected[u.Name] = true
				}
			}
			for _, svc := range t.Config {
				for _, u := range st.UnitsOf(svc) {
					affected[u.Name] = true
				}
			}
			waves = waves || t.Waves
			for _, name := range t.Units {
				self[name] = true
			}
		}
		// A unit's own writes do not change its hash, so they do not
		// make it stale; but the universe it is handed next must carry
		// them (its local settings, its state).
		for name := range self {
			// Its wave, error or life moved: the queue's index looks
			// at it again, queued or not (a claim holds a wave too).
			c.disp.queue.Touch(name)
			c.stat.tally.mark(name)
			if !affected[name] && c.stale.outdated[name] != viewHashUnknown {
				c.stale.outdated[name] = viewLacksOwnWrites
				c.requeue(st, name)
			}
		}
		// Everyone who sees a change is stale; their universes are
		// rebuilt and hashed only when they are handed out, once however
		// many changes landed meanwhile.
		for name := range affected {
			c.stat.tally.mark(name)
			if _, ok := st.Units[name]; !ok {
				if v := c.stale.views[name]; v != nil {
					c.dropTimer(name, v.machine)
				}
				delete(c.stale.views, name)
				delete(c.stale.outdated, name)
				c.disp.queue.Forget(name)
				continue
			}
			c.stale.outdated[name] = viewHashUnknown
			c.disp.queue.Add(name)
			if v := c.stale.views[name]; v != nil {
				c.wake(v.machine)
			}
		}
		if waves {
			// An operator change that a full rebuild used to follow:
			// the run counts start over as they did then, and the
			// queued units, whose waves are 0 again, may run sooner.
			c.disp.runs = map[string]int{}
			c.disp.queue.Rewave()
			c.touchClaims()
			c.wakeQueued()
		}
	}
	c.stale.index = st.Index
	c.stat.changed.notify()
}

// rebuildAll rebuilds every view.
func (c *Controller) rebuildAll(st *model.State) {
	c.stale.views = make(map[string]*view, len(st.Units))
	c.stat.tally.recountAll()
	c.disp.queue.Clear()
	c.stale.outdated = map[string]viewState{}
	c.disp.runs = map[string]int{}
	for name := range st.Units {
		// Only the hash is kept: the universe is garbage at once, so a
		// new leader of 10,000 units never holds them all.
		c.rebuild(st, name)
	}
	for name := range c.disp.claims {
		if _, ok := c.stale.views[name]; !ok {
			delete(c.disp.claims, name)
		}
	}
	// The queue's index started over with the queue; claims hold waves
	// too.
	c.touchClaims()
	for name := range c.stale.last {
		if _, ok := c.stale.views[name]; !ok {
			delete(c.stale.last, name)
		}
	}
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
		if old := c.stale.views[name]; old != nil {
			c.dropTimer(name, old.machine)
		}
		delete(c.stale.views, name)
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
	u, old := st.Units[name], c.stale.views[name]
	v := &view{hash: h, machine: u.Machine, member: schedule.Member(st, u)}
	c.stale.views[name] = v
	c.noteView(name, old, v, c.opts.Now())
	delete(c.stale.outdated, name)
	c.stat.tally.mark(name)
	if u.Error != nil {
		// Its phase follows its view (errorStands): pending while what
		// it sees is unknown, in error again if that turned out the
		// universe that failed. Status long polls look again.
		c.stat.changed.notify()
	}
	c.work.Rebuilt++
	c.work.HashedBytes += int64(n)
	c.requeue(st, name)
	return uni, seen
}

// requeue puts a unit in the queue if it may need a run, with the wait the
// state says, and takes it out if not.
func (c *Controller) requeue(st *model.State, name string) {
	u, v := st.Units[name], c.stale.views[name]
	if u == nil || v == nil {
		c.disp.queue.Forget(name)
		return
	}
	if schedule.NeedsRun(u, v.hash) {
		c.disp.queue.Set(name, schedule.NotBefore(u, v.hash))
		c.wake(v.machine)
	} else if c.disp.queue.Forget(name) {
		// It may have held the lowest wave: whoever waits looks again.
		c.stat.changed.notify()
		c.wakeQueued()
	}
}

// watchers adds to set the units whose universe shows unit's settings in
// relation rel: the other side's members (its peers for a peer relation).
func (c *Controller) watchers(st *model.State, unit string, rel int, set map[string]bool) {
	u, r := st.Units[unit], st.Relations[rel]
	if u == nil || r == nil {
		return
	}
	remote, ok := r.Remote(u.Service)
	if !ok {
		return
	}
	for _, o := range st.UnitsOf(remote.Service) {
		if o.Name != unit && (r.Scope != model.Container || st.Sees(o, u, r)) {
			set[o.Name] = true
		}
	}
}

// currentView brings unit's view up to st and returns it with the
// universe it stands for and the Seen record that universe's reconcile
// leaves, or nil if the unit is gone. The caller holds the universe only
// as long as it needs it. Called with mu.
func (c *Controller) currentView(st *model.State, unit string) (*view, *charmapi.Universe, *model.Seen) {
	c.refreshLocked(st)
	if c.stale.outdated[unit] != viewCurrent {
		uni, seen := c.rebuild(st, unit)
		return c.stale.views[unit], uni, seen
	}
	v := c.stale.views[unit]
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
