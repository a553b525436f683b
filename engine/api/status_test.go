package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
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
	rafttest.Eventually(t, time.Minute, "a/0 pending", func() error {
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

// The summary a waiter polls answers under the status's rules: the same
// auth, a long poll that hears of a change without an entry, a bad
// ?summary refused before any wait; and it says what status says.
func TestStatusSummaryLongPoll(t *testing.T) {
	n := startNode(t, "n1")
	ctx := ctxT(t)
	if _, err := n.store.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m1", Address: "10.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	two := 2
	env := model.Environment{APIVersion: model.APIVersion, Name: "gen", Services: map[string]model.ServiceSpec{
		"a": {CharmHash: "h-x", Units: &two, Placement: []string{"m1"}},
	}}
	charms := map[string]*model.Charm{"h-x": {Hash: "h-x", Meta: model.CharmMeta{Name: "x"}}}
	if _, err := n.store.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"", joinToken} {
		if code, _, _ := call(t, "GET", n.addr+"/v1/status?summary=1", tok, nil); code != http.StatusUnauthorized && code != http.StatusForbidden {
			t.Errorf("summary with token %q: %d, want refused as status is", tok, code)
		}
	}
	code, e, _ := call(t, "GET", n.addr+"/v1/status?summary=yes&index=1&wait=1m", operatorToken, nil)
	if code != http.StatusBadRequest || e == nil || !strings.Contains(e.Message, "summary=1") {
		t.Errorf("summary=yes: %d %v, want 400 saying what to pass", code, e)
	}

	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	var before *engine.Summary
	rafttest.Eventually(t, time.Minute, "two units pending", func() error {
		sum, err := op.WaitSummary(ctx, false, nil, 0)
		if err == nil && (sum.Phases.Pending != 2 || sum.Services["a"] == nil || sum.Services["a"].Pending != 2) {
			err = fmt.Errorf("summary %+v", sum)
		}
		before = sum
		return err
	})
	full, err := op.Status(ctx, false, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if before.Summary != full.Summary || before.Converged != full.Converged || before.Index != full.Index {
		t.Errorf("summary says %q converged=%v at %d; status %q converged=%v at %d",
			before.Summary, before.Converged, before.Index, full.Summary, full.Converged, full.Index)
	}

	// Handed out with no entry: the long poll from before wakes.
	if work, err := op.Claim(ctx, "m1", 0, 0); err != nil || len(work) != 2 {
		t.Fatalf("claim: %d units, %v", len(work), err)
	}
	after, err := op.WaitSummary(ctx, false, before, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if after.Phases.Reconciling != 2 || after.Generation == before.Generation || len(after.Stuck) != 2 {
		t.Fatalf("after the claim: %+v", after)
	}
	// Nothing moves since: a poll from the latest summary waits it out.
	idle, err := op.WaitSummary(ctx, false, after, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if idle.Generation != after.Generation || idle.Phases.Reconciling != 2 {
		t.Errorf("idle poll: generation %d -> %d, %+v", after.Generation, idle.Generation, idle.Phases)
	}
}
