package ledger

import (
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// claimLocked picks the units of machine that may run now and claims
// them, taking their universes from ahead where a pass built them. It
// also returns the earliest future retry among that machine's failing
// units. Called with mu and the store's read lock.
func (l *Ledger) claimLocked(st *model.State, machine string, max int, ahead *BuiltAhead) ([]wire.Work, time.Time) {
	l.known[machine] = true
	l.refreshLocked(st)
	now := l.opts.Now()
	if acts := l.actionWork(st, machine, max, now); len(acts) > 0 {
		// Operations first, as Juju runs a queued action before the
		// next hook; the agent asks again at once for the rest.
		return acts, time.Time{}
	}
	for {
		picked, next, changedBack := l.pick(st, machine, max, now, ahead)
		// A unit that saw a change but turned out unchanged may have
		// held the lowest wave: look again without it.
		if len(picked) > 0 || !changedBack {
			if len(picked) > 0 {
				return l.hand(st, machine, picked, now, false, ahead), next
			}
			// Nothing else to run: Juju too runs update-status only
			// on an idle unit.
			work, at := l.timerWork(st, machine, max, now)
			if !at.IsZero() && (next.IsZero() || at.Before(next)) {
				next = at
			}
			return work, next
		}
	}
}

// picked is a unit chosen to run with the universe built for it.
type picked struct {
	name string
	uni  *charmapi.Universe
	seen *model.Seen
}

// entry is what schedule.Queue.Choose needs of one unit besides the
// queue: its view and its claim. Called with mu.
func (l *Ledger) entry(name string) schedule.Entry {
	v, vs := l.stale.ViewOf(name)
	if v == nil {
		return schedule.Entry{}
	}
	e := schedule.Entry{Known: true, Hash: v.Hash, Machine: v.Machine, Member: v.Member, Moved: vs == ViewHashUnknown}
	if cl := l.claims[name]; cl != nil {
		e.Claimed, e.Until, e.Timer = true, cl.until, cl.timer
	}
	return e
}

// pick chooses up to max units of machine to run now (schedule.Choose,
// answered by the queue's index at the cost of the machine's own units)
// and builds their universes, rebuilding the views of those that saw a
// change. It also returns the earliest time one of machine's queued
// units may run. changedBack says one of them turned out unchanged, so
// the wave must be looked at again. Only the units handed out have a
// universe built, so at most max are alive at once.
func (l *Ledger) pick(st *model.State, machine string, max int, now time.Time, ahead *BuiltAhead) (out []picked, next time.Time, changedBack bool) {
	choice, run := l.queue.ChooseInOrder(st, machine, now, l.entry)
	for name := range run {
		if max > 0 && len(out) >= max {
			break
		}
		cur, vs := l.stale.ViewOf(name)
		if vs != ViewCurrent {
			var uni *charmapi.Universe
			var seen *model.Seen
			if p := l.takeAhead(ahead, name, ""); p != nil {
				uni, seen = l.rebuilt(st, name, p.Uni, p.Seen, p.Hash, p.Hashed)
			} else {
				uni, seen = l.rebuild(st, name)
			}
			v := l.stale.View(name)
			if ok, _ := schedule.Due(st.Units[name], v.Hash, v.Member, now); !ok || uni == nil {
				// It changed back: it must not hold the wave any more.
				changedBack = true
				continue
			}
			out = append(out, picked{name, uni, seen})
			continue
		}
		// The hash is current: only the content is built, and not
		// hashed again.
		if p := l.takeAhead(ahead, name, cur.Hash); p != nil {
			l.counts.built.Add(1)
			out = append(out, picked{name, p.Uni, p.Seen})
			continue
		}
		uni, seen := l.build.Build(st, name)
		l.counts.built.Add(1)
		out = append(out, picked{name, uni, seen})
	}
	return out, choice.Next, changedBack
}

// hand claims the picked units for machine and returns their work. Each
// claim holds its universe until the result comes back. timer says they
// are update-status runs (timerWork).
func (l *Ledger) hand(st *model.State, machine string, ps []picked, now time.Time, timer bool, ahead *BuiltAhead) []wire.Work {
	work := make([]wire.Work, 0, len(ps))
	for _, p := range ps {
		v := l.stale.View(p.name)
		u := st.Units[p.name]
		var uni charmapi.Universe
		var encoded []byte
		if timer {
			uni = schedule.UpdateStatusUniverse(st, u, p.uni, v.Hash, p.seen)
		} else if run, b := ahead.runUniverse(p.name, p.uni, v.Hash); run != nil {
			uni, encoded = *run, b
		} else {
			uni = schedule.RunUniverse(st, u, p.uni, v.Hash, p.seen)
		}
		ch := st.Charms[uni.Charm]
		l.claims[p.name] = &claim{Machine: machine, Hash: v.Hash, uni: l.kept(p.name, uni), seen: p.seen, at: now, until: now.Add(l.opts.Lease),
			timer: timer || schedule.TimerRun(u, v.Hash)}
		l.watchLease(now.Add(l.opts.Lease), now)
		work = append(work, wire.Work{Unit: p.name, Hash: v.Hash, Charm: uni.Charm, Legacy: ch != nil && ch.Legacy, Universe: &uni,
			Environment: st.Name, Principal: u.Principal, Status: &charmapi.Status{State: u.Status.State, Message: u.Status.Message}, Ports: u.Ports,
			UniverseJSON: encoded})
		if !timer {
			l.runs.handed(p.name)
		}
	}
	if n := int64(len(l.claims)); n > l.counts.peakClaims.Load() {
		l.counts.peakClaims.Store(n)
	}
	if len(ps) > 0 {
		// Pending to reconciling: status long polls look again.
		l.noteStatus()
	}
	return work
}

// kept is what unit name's claim holds of the universe handed out: what
// its result is checked against (the unit, its leadership, its relations'
// idents and remote services, its secrets), not its events, which a first
// run lists for every member twice, nor, unless the unit's last universe
// is kept to be compared with it (schedule.KeepLast, Staleness.LastOf),
// its relations' members, whose settings are each universe's own in a
// peer relation. Called with mu.
func (l *Ledger) kept(name string, uni charmapi.Universe) *charmapi.Universe {
	uni.Events = nil
	if len(uni.Relations) == 0 || schedule.KeepLast(l.runs.count[name]+1) || l.stale.LastOf(name) != nil {
		return &uni
	}
	rels := make([]charmapi.Relation, len(uni.Relations))
	for i, r := range uni.Relations {
		r.Units = nil
		rels[i] = r
	}
	uni.Relations = rels
	return &uni
}

// GiveBack gives back work handed to machine that never reached its agent:
// the units' claims, and the operations handed out with them.
func (l *Ledger) GiveBack(machine string, work []wire.Work) *Owed {
	l.lock()
	for _, w := range work {
		if w.Action != nil {
			delete(l.acts.handed, w.Action.ID)
			continue
		}
		if cl := l.claims[w.Unit]; cl != nil && cl.Machine == machine && cl.Hash == w.Hash {
			delete(l.claims, w.Unit)
			l.claimEnded(w.Unit, machine)
		}
	}
	l.noteStatus()
	l.wakeQueued()
	return l.unlock()
}

// Release gives up every claim of machine's agent (Controller.Release).
func (l *Ledger) Release(machine string) *Owed {
	l.lock()
	released := false
	for name, cl := range l.claims {
		if cl.Machine == machine {
			delete(l.claims, name)
			released = true
		}
	}
	if released {
		l.noteStatus()
	}
	l.wakeQueued()
	return l.unlock()
}

// ReleaseExcept drops machine's claims on units other than running, but
// for those younger than ClaimGrace (Controller.ReleaseExcept).
func (l *Ledger) ReleaseExcept(machine string, units []string) *Owed {
	l.lock()
	running := make(map[string]bool, len(units))
	for _, u := range units {
		running[u] = true
	}
	cutoff := l.opts.Now().Add(-ClaimGrace)
	dropped := false
	for name, cl := range l.claims {
		if cl.Machine == machine && !running[name] && cl.at.Before(cutoff) {
			delete(l.claims, name)
			dropped = true
		}
	}
	// A heartbeat that changes nothing wakes nobody: only a dropped claim
	// can let a wave, or a unit's phase, move.
	if dropped {
		l.noteStatus()
		l.wakeQueued()
	}
	return l.unlock()
}

// ClaimGrace is how long a fresh claim is safe from ReleaseExcept: the
// work may still be on its way to the agent, or its report on its way
// back.
const ClaimGrace = 30 * time.Second

// Accept checks machine's reports against their claims and returns the
// results of those that match, and the units of those that do not. A
// failed result is queued for its retry.
func (l *Ledger) Accept(machine string, reports []wire.Report, now time.Time) (results []model.Result, stale []string, w *Owed) {
	l.lock()
	for _, rep := range reports {
		cl := l.claims[rep.Unit]
		if cl == nil || cl.Hash != rep.Hash || cl.Machine != machine {
			stale = append(stale, rep.Unit)
			continue
		}
		res := l.build.Result(cl.uni, cl.Hash, cl.seen, rep.Output, rep.Error, l.stale.LastOf(rep.Unit))
		res.Timer = cl.timer
		if rep.Duration > 0 {
			res.Started = now.Add(-rep.Duration).UnixNano()
		}
		l.runs.ran(rep.Unit, machine, now)
		if res.Error != "" {
			res.RetryAt = l.queue.AddRateLimited(rep.Unit, max(cl.uni.Attempt, 1), now).UnixNano()
		}
		results = append(results, *res)
	}
	return results, stale, l.unlock()
}

// CloseReported drops the claims results answer, once the views hold
// them.
func (l *Ledger) CloseReported(results []model.Result) *Owed {
	l.lock()
	for _, r := range results {
		if cl := l.claims[r.Unit]; cl != nil && cl.Hash == r.Hash {
			delete(l.claims, r.Unit)
			l.claimEnded(r.Unit, cl.Machine)
			if r.Error == "" && schedule.KeepLast(l.runs.count[r.Unit]) {
				l.stale.keepLast(r.Unit, cl.uni)
			}
		}
	}
	// The claims held their wave: the units queued behind it may run.
	l.wakeQueued()
	// Reconciling to settled, after the refresh's note and with no new
	// entry: status long polls must hear of it too.
	l.noteStatus()
	return l.unlock()
}

// wakeQueued wakes the machines that have queued units: a claim ended or
// a unit left the queue, and the wave that held them back may have moved.
// Machines with nothing queued have nothing to gain. Called with mu.
//
// It stops as soon as every machine that has polled is woken: the queue
// holds every unit still to run (all of them at the start of a deploy),
// and every settled unit's report calls it, so a full walk each time
// would make the leader's cost quadratic in the units.
func (l *Ledger) wakeQueued() {
	if len(l.known) == 0 || l.queue.Len() == 0 {
		return
	}
	w := l.owe()
	for name := range l.queue.All() {
		if w.All || len(w.named) >= len(l.known) {
			return
		}
		if v := l.stale.View(name); v != nil && l.known[v.Machine] {
			l.wake(v.Machine)
		}
	}
}

// wakeAll wakes every work poll: every view was rebuilt or dropped.
// Called with mu.
func (l *Ledger) wakeAll() { l.owe().All = true }

// watchLease owes a watch of the leases that fires by until, the end of
// a claim's lease handed out at now. Called with mu.
func (l *Ledger) watchLease(until, now time.Time) {
	w := l.owe()
	if w.LeaseBy.IsZero() || until.Before(w.LeaseBy) {
		w.LeaseBy, w.LeaseAt = until, now
	}
}

// EndedLeases says whether a claim's lease ended since seen, and when the
// next one ends (zero if none). Only the claims are walked, not the
// units: they are bounded by the hooks in flight. A lease that ended
// turns its unit from reconciling back to pending with no entry and no
// report, so nothing else would move the status generation; and the wave
// it held back may move: the wakes say so.
func (l *Ledger) EndedLeases(seen, now time.Time) (next time.Time, w *Owed) {
	l.lock()
	ended := false
	for _, cl := range l.claims {
		switch {
		case !now.Before(cl.until):
			ended = ended || cl.until.After(seen)
		case next.IsZero() || cl.until.Before(next):
			next = cl.until
		}
	}
	if ended {
		l.noteStatus()
		l.wakeQueued()
	}
	return next, l.unlock()
}
