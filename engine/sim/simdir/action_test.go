package simdir

import (
	"context"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/engine/sim"
	"github.com/fixpoint/fixpoint/model"
)

// kvEnv deploys testdata's classic-kv charm, which declares actions, with
// two units.
func kvEnv() *sim.Env {
	env := NewEnv("acts")
	env.Deploy("kv", "../../../testdata/charms/classic-kv").Units(2)
	return env
}

// TestActionsAtTheFixedPoint: every schedule runs the actions at its fixed
// point, in order (the leader resolved, defaults filled in), applies what
// they wrote and settles again, to one fixed point.
func TestActionsAtTheFixedPoint(t *testing.T) {
	rep, err := kvEnv().Simulate(context.Background(), sim.Options{Schedules: 3, Actions: []sim.Action{
		{Unit: "kv/0", Name: "greet", Params: map[string]any{"greeting": "hi"}},
		{Unit: "kv/leader", Name: "greet", Params: map[string]any{"fail": "boom"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || len(rep.FixedPoints) != 1 {
		t.Fatalf("report:\n%s", rep)
	}
	if got := rep.FixedPoints[0].Settings["kv/0 status"]; got != "active: hi x1" {
		t.Errorf("kv/0 status = %q; want the action's", got)
	}
	for _, sc := range rep.Schedules {
		if len(sc.Actions) != 2 {
			t.Fatalf("schedule %d ran %d actions; want 2", sc.Index, len(sc.Actions))
		}
		ok, failed := sc.Actions[0], sc.Actions[1]
		if ok.Status != model.ActionCompleted || ok.Params["times"] != 1.0 || ok.Unit != "kv/0" {
			t.Errorf("schedule %d: greet %+v; want completed with times defaulted to 1", sc.Index, ok)
		}
		if failed.Status != model.ActionFailed || failed.Message != "boom" || !strings.HasPrefix(failed.Unit, "kv/") {
			t.Errorf("schedule %d: greet fail=boom %+v", sc.Index, failed)
		}
	}
}

// TestActionNotDeclared: an action the charm does not declare stops the
// simulation with the declared ones named.
func TestActionNotDeclared(t *testing.T) {
	_, err := kvEnv().Simulate(context.Background(), sim.Options{Schedules: 1, Actions: []sim.Action{{Unit: "kv/0", Name: "nosuch"}}})
	if err == nil || !strings.Contains(err.Error(), "it declares greet, hold, noop, remember") {
		t.Fatalf("err = %v; want the declared actions named", err)
	}
}
