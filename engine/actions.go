package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
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
