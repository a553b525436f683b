package api_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// A status long poll hears of a phase change that takes no log entry (a
// unit handed out: pending to reconciling), also when the change lands
// before the poll reaches the server: the generation it passes says so.
func TestStatusWaitSeesPhaseChangeWithoutNewEntry(t *testing.T) {
	n := startNode(t, "n1")
	ctx := ctxT(t)
	if _, err := n.store.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m1", Address: "10.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	one := 1
	env := model.Environment{APIVersion: model.APIVersion, Name: "gen", Services: map[string]model.ServiceSpec{
		"a": {CharmHash: "h-x", Units: &one, Placement: []string{"m1"}},
	}}
	charms := map[string]*model.Charm{"h-x": {Hash: "h-x", Meta: model.CharmMeta{Name: "x"}}}
	if _, err := n.store.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		t.Fatal(err)
	}
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	var before *engine.Status
	waitFor(t, "a/0 pending", func() error {
		st, err := op.Status(ctx, false, 0, 0)
		if err == nil && (st.Units["a/0"] == nil || st.Units["a/0"].Phase != engine.Pending) {
			err = fmt.Errorf("a/0 is %+v", st.Units["a/0"])
		}
		before = st
		return err
	})

	// The unit is handed out after the status was read and before the
	// poll starts: no entry, only the generation moves.
	work, err := op.Claim(ctx, "m1", 0, 0)
	if err != nil || len(work) != 1 {
		t.Fatalf("claim: %d units, %v; want a/0", len(work), err)
	}
	start := time.Now()
	after, err := op.WaitStatus(ctx, false, before, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if u := after.Units["a/0"]; u == nil || u.Phase != engine.Reconciling {
		t.Fatalf("after the claim the poll answered a/0 = %+v (waited %s), want reconciling", u, time.Since(start))
	}
	if after.Index != before.Index {
		t.Errorf("index moved %d -> %d: the claim was to take no entry", before.Index, after.Index)
	}
	if after.Generation == before.Generation {
		t.Errorf("generation stayed %d across the claim", after.Generation)
	}

	// Nothing moves since: a poll from the latest status waits it out.
	idle, err := op.WaitStatus(ctx, false, after, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if idle.Generation != after.Generation || idle.Units["a/0"].Phase != engine.Reconciling {
		t.Errorf("idle poll: generation %d -> %d, a/0 %s", after.Generation, idle.Generation, idle.Units["a/0"].Phase)
	}
}
