package ledger

import (
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// Operations (actions and exec) reach agents through the work poll: a
// look at a machine's work first hands out the oldest pending operation
// of each of its units that has no claim (no hook in flight) and none
// running, with the unit's current universe. The agent marks it started
// (StartAction, replicated: it runs once), runs it under the unit's run
// lock (never beside a hook of the unit) and reports it (FinishAction).
// What was handed out when is the leader's soft state, like claims: an
// operation handed out and never started is handed out again after a
// lease.

// actionState is the ledger's soft state about operations, under
// ledger.mu.
type actionState struct {
	// handed is when each pending operation was last handed out.
	handed map[int]time.Time
	// waiting are the units whose operation waits for a claim to end:
	// the claim's report wakes their machine.
	waiting map[string]bool
}

// actionWork hands out, up to max, the operations machine's units may
// start now. Called with mu from claimLocked.
func (l *Ledger) actionWork(st *model.State, machine string, max int, now time.Time) []wire.Work {
	if len(st.ActiveActions) == 0 {
		return nil
	}
	if l.acts.handed == nil {
		l.acts = actionState{handed: map[int]time.Time{}, waiting: map[string]bool{}}
	}
	var work []wire.Work
	for _, a := range st.NextActions(machine) {
		if max > 0 && len(work) >= max {
			break
		}
		if at, ok := l.acts.handed[a.ID]; ok && now.Sub(at) < l.opts.Lease {
			continue
		}
		if cl := l.claims[a.Unit]; cl != nil && now.Before(cl.until) {
			l.acts.waiting[a.Unit] = true
			continue
		}
		u := st.Units[a.Unit]
		uni, seen := l.build.Build(st, a.Unit)
		if uni == nil || u == nil {
			continue
		}
		l.counts.built.Add(1)
		hash := ""
		if v := l.stale.View(a.Unit); v != nil {
			hash = v.Hash
		}
		// The events the unit's hooks have still to run, so that the
		// old-hook adapter shows the action the relations as the unit
		// has joined them; the action runs none of them.
		run := schedule.RunUniverse(st, u, uni, hash, seen)
		ch := st.Charms[run.Charm]
		l.acts.handed[a.ID] = now
		delete(l.acts.waiting, a.Unit)
		work = append(work, wire.Work{Unit: a.Unit, Hash: hash, Charm: run.Charm, Legacy: ch != nil && ch.Legacy, Universe: &run,
			Environment: st.Name, Principal: u.Principal, Status: &charmapi.Status{State: u.Status.State, Message: u.Status.Message}, Ports: u.Ports,
			Action: &wire.Action{ID: a.ID, Name: a.Name, Params: a.Params, Exec: a.Exec}})
	}
	for id := range l.acts.handed {
		if _, ok := st.ActiveActions[id]; !ok {
			delete(l.acts.handed, id)
		}
	}
	return work
}

// wakeForActions wakes the machines of units with a pending operation.
// Called with mu, after a refresh that saw operations move.
func (l *Ledger) wakeForActions(st *model.State) {
	woken := map[string]bool{}
	for _, unit := range st.ActiveActions {
		u := st.Units[unit]
		if u == nil || u.Machine == "" || woken[u.Machine] {
			continue
		}
		woken[u.Machine] = true
		l.wake(u.Machine)
	}
}

// claimEnded wakes machine if unit has an operation that waited for the
// claim that just ended. Called with mu.
func (l *Ledger) claimEnded(unit, machine string) {
	if l.acts.waiting[unit] {
		delete(l.acts.waiting, unit)
		l.wake(machine)
	}
}
