package sim

import (
	"context"
	"fmt"
	"strings"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// Action is one charm action to run on a unit once a schedule reaches its
// fixed point (`fixpoint charm test --action`).
type Action struct {
	// Unit is a unit, or SERVICE/leader for the service's leader then.
	Unit   string
	Name   string
	Params map[string]any
}

// String is the action as --action spells it.
func (a Action) String() string { return a.Unit + " " + a.Name }

// action runs act as the control plane and an agent would: it is queued
// (its params checked against the charm's declaration, the defaults
// filled in), started on the unit's machine, run in the unit's hook
// context on the universe the unit sees now, and finished, what it wrote
// applied as a hook's writes are. An action the control plane refuses
// (no such unit or action, bad params) is an error.
func (r *runner) action(ctx context.Context, act Action) error {
	unit := act.Unit
	if svc, ok := strings.CutSuffix(unit, "/leader"); ok {
		sv := r.fsm.st.Services[svc]
		switch {
		case sv == nil:
			return fmt.Errorf("action %s: service %s does not exist", act, model.Quote(svc, 24))
		case sv.Leader == "":
			return fmt.Errorf("action %s: service %s has no leader at the fixed point; name a unit", act, svc)
		}
		unit = sv.Leader
	}
	if _, err := r.fsm.apply(&model.Command{Op: model.OpEnqueue, Time: r.fsm.now().UnixNano(), Enqueue: &model.EnqueueAction{Unit: unit, Name: act.Name, Params: act.Params}}); err != nil {
		return fmt.Errorf("action %s: %w", act, err)
	}
	id := r.fsm.st.NextAction
	u := r.fsm.st.Units[unit]
	if _, err := r.fsm.apply(&model.Command{Op: model.OpStart, Time: r.fsm.now().UnixNano(), StartAction: &model.StartAction{ID: id, Machine: u.Machine}}); err != nil {
		return fmt.Errorf("action %s: start: %w", act, err)
	}
	p, err := r.prepare(unit, false)
	if err != nil {
		return err
	}
	a := r.fsm.st.Actions[id]
	rep := noActions(unit, id)
	if h, ok := p.hook.(ActionHook); ok {
		rep = h.RunAction(ctx, p.call, wire.Action{ID: id, Name: a.Name, Params: a.Params})
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	fin := engine.ActionFinish(p.given, r.fsm.st.Sealer(), u.Machine, rep)
	if _, err := r.fsm.apply(&model.Command{Op: model.OpFinish, Time: r.fsm.now().UnixNano(), Finish: fin}); err != nil {
		return fmt.Errorf("action %s: finish: %w", act, err)
	}
	done := *r.fsm.st.Actions[id]
	r.trail.acts = append(r.trail.acts, &done)
	r.trail.step([]string{unit}, r.fsm.st)
	return nil
}

// noActions is the report of an action on a hook that runs none (a Go
// reconcile function, an executable): it failed, saying how to test it.
func noActions(unit string, id int) *wire.ActionReport {
	return &wire.ActionReport{ID: id, Unit: unit, Failed: true,
		Message: "a reconcile function or executable runs no actions here: test the handler with charmtest.RunAction, or simulate the charm's directory"}
}
