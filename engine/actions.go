package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/wire"
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
func (l *ledger) actionWork(st *model.State, machine string, max int, now time.Time) []wire.Work {
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
		uni, seen := Build(st, a.Unit)
		if uni == nil || u == nil {
			continue
		}
		l.counts.built.Add(1)
		hash := ""
		if v := l.stale.view(a.Unit); v != nil {
			hash = v.hash
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
func (l *ledger) wakeForActions(st *model.State) {
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
func (l *ledger) claimEnded(unit, machine string) {
	if l.acts.waiting[unit] {
		delete(l.acts.waiting, unit)
		l.wake(machine)
	}
}

// startAction records that machine's agent takes operation id
// (Controller.StartAction).
func startAction(ctx context.Context, store Store, now time.Time, machine string, id int) error {
	_, err := store.Apply(ctx, &model.Command{Op: model.OpStart, Time: now.UnixNano(), StartAction: &model.StartAction{ID: id, Machine: machine}})
	if err != nil {
		return fmt.Errorf("start operation %d: %w", id, err)
	}
	return nil
}

// finishAction records what operation rep.ID came to on machine
// (Controller.FinishAction).
func finishAction(ctx context.Context, store Store, now time.Time, machine string, rep *wire.ActionReport) (*model.Response, error) {
	fin := ActionFinish(nil, nil, machine, rep)
	if len(rep.Output) > 0 {
		err := store.View(func(st *model.State) error {
			a := st.Actions[rep.ID]
			if a == nil || a.Unit != rep.Unit {
				return fmt.Errorf("operation %d is not %s's", rep.ID, rep.Unit)
			}
			uni, _ := Build(st, rep.Unit)
			if uni == nil {
				return fmt.Errorf("unit %s does not exist", rep.Unit)
			}
			fin = ActionFinish(uni, st.Sealer(), machine, rep)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	resp, err := store.Apply(ctx, &model.Command{Op: model.OpFinish, Time: now.UnixNano(), Finish: fin})
	if err != nil {
		return nil, fmt.Errorf("finish operation %d: %w", rep.ID, err)
	}
	return resp, nil
}

// ActionFinish makes an agent's report of an operation the command that
// finishes it: what the operation wrote (rep.Output) is decoded against
// uni, the unit's universe now, as a hook's result is, and its secrets
// are sealed with sl; writes refused fail the operation and keep none.
func ActionFinish(uni *charmapi.Universe, sl model.Sealer, machine string, rep *wire.ActionReport) *model.FinishAction {
	fin := &model.FinishAction{ID: rep.ID, Machine: machine, Failed: rep.Failed, Message: rep.Message, Results: rep.Results}
	for _, l := range rep.Log {
		fin.Log = append(fin.Log, model.ActionLog{Time: l.Time, Message: l.Message})
	}
	if len(rep.Output) == 0 || uni == nil {
		return fin
	}
	res, err := DecodeResult(uni, rep.Output)
	if err != nil {
		fin.Failed = true
		fin.Message = model.Truncate(fmt.Sprintf("what the operation wrote was refused: %v", err), model.MaxErrorBytes)
		return fin
	}
	// An action's secrets are sealed as a hook's are, before the command
	// is proposed.
	writes := []model.Result{*res}
	if err := model.SealResults(sl, writes); err != nil {
		fin.Failed = true
		fin.Message = model.Truncate(fmt.Sprintf("its secrets could not be sealed: %v", err), model.MaxErrorBytes)
		return fin
	}
	fin.Writes = &writes[0]
	return fin
}
