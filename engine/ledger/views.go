package ledger

import (
	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/model"
)

// View is what the controller keeps of one unit's universe at its index:
// the hash, not the universe. Universes are built when they are handed
// out, held by the claim until the result comes back, and dropped: the
// memory they take is bounded by the hooks in flight, not by the
// environment: a view never holds a universe or its Seen record, which
// grow with the members each unit sees.
type View struct {
	Hash    string
	Machine string
	Member  bool // placed on a registered machine
}

// ViewState says how far a view is behind the state.
type ViewState uint8

const (
	ViewCurrent ViewState = iota
	// ViewLacksOwnWrites: the unit's own settings or state moved. Its
	// hash, which leaves those out, still holds; the universe it is
	// handed (built at hand-out, as always) must carry them.
	ViewLacksOwnWrites
	// ViewHashUnknown: something the unit sees changed: it is stale, and
	// its hash is unknown until rebuilt.
	ViewHashUnknown
)

// refreshLocked brings the views up to st and acts on what moved: the
// queue, the wakes and status's recounts it owes (consume). The caller
// holds mu and the store's read lock, so views and state agree. A gap in
// the state's journal (a restart, a restore, an operator change)
// rebuilds every view.
func (l *Ledger) refreshLocked(st *model.State) {
	n, moved := l.stale.refresh(st, l.opts.Changes)
	if !moved {
		return
	}
	l.consume(n)
	if n.rebuild {
		// Rebuilding requeues every unit that needs a run, which wakes its
		// machine; the others sleep on.
		l.rebuildAll(st)
	} else {
		for _, name := range n.self {
			// Its wave, error or life moved: the queue's index looks
			// at it again, queued or not (a claim holds a wave too).
			l.queue.Touch(name)
		}
		for _, name := range n.lacking {
			l.requeue(st, name)
		}
		for _, u := range n.gone {
			if u.view != nil {
				l.runs.dropTimer(u.name, u.view.Machine)
			}
			l.queue.Forget(u.name)
		}
		for _, u := range n.stale {
			l.queue.Add(u.name)
			if u.view != nil {
				l.wake(u.view.Machine)
			}
		}
		if n.waves {
			// An operator change starts the run counts over, as a
			// rebuild of every view does, and the queued units, whose
			// waves are 0 again, may run sooner.
			l.runs.forgetCounts()
			l.queue.Rewave()
			l.touchClaims()
			l.wakeQueued()
		}
	}
	if n.actions || n.rebuild {
		l.wakeForActions(st)
	}
	l.stale.caughtUp(st)
	l.noteStatus()
}

// consume owes status a recount of the units n names: they may have
// moved phase, all of them after a rebuild of every view. Called with mu.
func (l *Ledger) consume(n staleNote) {
	if n.rebuild {
		l.recountAll()
		return
	}
	l.recount(n.self...)
	for _, u := range n.gone {
		l.recount(u.name)
	}
	for _, u := range n.stale {
		l.recount(u.name)
	}
}

// rebuildAll rebuilds every view.
func (l *Ledger) rebuildAll(st *model.State) {
	l.stale.reset(len(st.Units))
	l.queue.Clear()
	l.runs.forgetCounts()
	for name := range st.Units {
		// Only the hash is kept: the universe is garbage at once, so a
		// new leader of 10,000 units never holds them all.
		l.rebuild(st, name)
	}
	for name := range l.claims {
		if l.stale.View(name) == nil {
			delete(l.claims, name)
		}
	}
	// The queue's index started over with the queue; claims hold waves
	// too.
	l.touchClaims()
	l.stale.pruneLast()
	l.syncTimers()
}

// touchClaims has the queue's index look at every claimed unit again.
// Called with mu.
func (l *Ledger) touchClaims() {
	for name := range l.claims {
		l.queue.Touch(name)
	}
}

// rebuild rebuilds one unit's view and its place in the queue, and
// returns the universe it hashed (nil if the unit is gone) with the Seen
// record its reconcile leaves; the view keeps neither.
func (l *Ledger) rebuild(st *model.State, name string) (*charmapi.Universe, *model.Seen) {
	if _, ok := st.Units[name]; !ok {
		if old := l.stale.drop(name); old != nil {
			l.runs.dropTimer(name, old.Machine)
		}
		l.recount(name)
		l.queue.Forget(name)
		return nil, nil
	}
	uni, seen, h, n := l.build.BuildHashed(st, name)
	return l.rebuilt(st, name, uni, seen, h, n)
}

// rebuilt installs the view of a unit of st from its universe uni, built
// and hashed (h, n bytes) by rebuild or ahead of a hand-out (Prebuilt),
// and returns uni and seen.
func (l *Ledger) rebuilt(st *model.State, name string, uni *charmapi.Universe, seen *model.Seen, h string, n int) (*charmapi.Universe, *model.Seen) {
	u := st.Units[name]
	v := &View{Hash: h, Machine: u.Machine, Member: schedule.Member(st, u)}
	old := l.stale.install(name, v)
	l.runs.noteView(name, old, v, l.opts.Now())
	l.recount(name)
	if u.Error != nil {
		// Its phase follows its view (errorStands): pending while what
		// it sees is unknown, in error again if that turned out the
		// universe that failed. Status long polls look again.
		l.noteStatus()
	}
	l.counts.rebuilt.Add(1)
	l.counts.hashedBytes.Add(int64(n))
	l.requeue(st, name)
	return uni, seen
}

// requeue puts a unit in the queue if it may need a run, with the wait the
// state says, and takes it out if not.
func (l *Ledger) requeue(st *model.State, name string) {
	u, v := st.Units[name], l.stale.View(name)
	if u == nil || v == nil {
		l.queue.Forget(name)
		return
	}
	if schedule.NeedsRun(u, v.Hash) {
		l.queue.Set(name, schedule.NotBefore(u, v.Hash))
		l.wake(v.Machine)
	} else if l.queue.Forget(name) {
		// It may have held the lowest wave: whoever waits looks again.
		l.noteStatus()
		l.wakeQueued()
	}
}

// currentView brings unit's view up to st and returns it with the
// universe it stands for and the Seen record that universe's reconcile
// leaves, or nil if the unit is gone. The caller holds the universe only
// as long as it needs it. Called with mu.
func (l *Ledger) currentView(st *model.State, unit string) (*View, *charmapi.Universe, *model.Seen) {
	l.refreshLocked(st)
	if l.stale.behind(unit) != ViewCurrent {
		uni, seen := l.rebuild(st, unit)
		return l.stale.View(unit), uni, seen
	}
	v := l.stale.View(unit)
	if v == nil {
		return nil, nil, nil
	}
	uni, seen := l.build.Build(st, unit)
	l.counts.built.Add(1)
	return v, uni, seen
}
