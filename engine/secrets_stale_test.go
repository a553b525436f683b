package engine

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// TestSecretGrantMarksStaleOnlyItsAudience: a grant, a revoke and a grant
// to a whole service each mark stale exactly the secret's audience before
// and after the change (the owner, the grantee it gained or lost, and its
// units), so a revoked unit rebuilds and loses the secret, and units
// outside the audience (the owner's peer, an unrelated service) keep
// their views.
func TestSecretGrantMarksStaleOnlyItsAudience(t *testing.T) {
	s := newMemStore()
	shop(t, s, 2, 2)
	charms := map[string]*model.Charm{"h-web": {Hash: "h-web", Meta: model.CharmMeta{Name: "web", Requires: map[string]model.Endpoint{"db": {Interface: "kv"}}}}}
	var rel int
	_ = s.View(func(st *model.State) error {
		for _, id := range st.SortedRelations() {
			if r := st.Relations[id]; r.Key != "" {
				rel = id
			}
		}
		maps.Copy(charms, st.Charms)
		return nil
	})
	env := model.Environment{APIVersion: model.APIVersion, Name: "shop",
		Services:  map[string]model.ServiceSpec{"db": {CharmHash: "h-db", Units: intp(2)}, "web": {CharmHash: "h-web", Units: intp(2)}, "other": {CharmHash: "h-web", Units: intp(2)}},
		Relations: map[string][]string{"web-db": {"web:db", "db:db"}}}
	if _, err := s.Apply(context.Background(), &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		t.Fatal(err)
	}
	id, err := charmapi.NewSecretID()
	if err != nil {
		t.Fatal(err)
	}
	bare, _ := model.ParseSecretURI(id)
	ctl := NewController(s, Options{Window: 1})
	settleAll(t, ctl)
	// change applies db/0's secret changes and returns who went stale:
	// out of settled in status once the controller took the change in,
	// where every unit was settled (db/0, whose changes come back to a
	// universe it reconciled, is held in error as diverged). It then
	// runs what may run.
	change := func(cs ...model.SecretChange) []string {
		t.Helper()
		resp, err := s.Apply(context.Background(), &model.Command{Op: model.OpResults, Results: []model.Result{{
			Unit: "db/0", Hash: hashOf(s, "db/0"), Seen: &model.Seen{Life: model.Alive}, Secrets: cs}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Skipped) > 0 {
			t.Fatalf("skipped: %v", resp.Skipped)
		}
		st, err := ctl.Status()
		if err != nil {
			t.Fatal(err)
		}
		var stale []string
		for name, us := range st.Units {
			if us.Phase != Settled {
				stale = append(stale, name)
			}
		}
		slices.Sort(stale)
		settleAll(t, ctl)
		return stale
	}
	sees := func(unit string) bool {
		var uni *charmapi.Universe
		_ = s.View(func(st *model.State) error {
			uni, _ = Build(st, unit)
			return nil
		})
		return uni.Secret(id) != nil
	}

	if got, want := change(model.SecretChange{Op: model.SecretOpAdd, ID: bare, Owner: model.SecretOwnerUnit, Sealed: "sealed"}), []string{"db/0"}; !slices.Equal(got, want) {
		t.Errorf("add: stale %v, want %v", got, want)
	}
	if got, want := change(model.SecretChange{Op: model.SecretOpGrant, ID: bare, Grantee: "web/1", Relation: rel}), []string{"db/0", "web/1"}; !slices.Equal(got, want) {
		t.Errorf("grant to web/1: stale %v, want %v", got, want)
	}
	if !sees("web/1") || sees("web/0") || sees("db/1") {
		t.Errorf("after the grant to web/1: web/1 sees it %v, web/0 %v, db/1 %v", sees("web/1"), sees("web/0"), sees("db/1"))
	}
	if got, want := change(model.SecretChange{Op: model.SecretOpRevoke, ID: bare, Grantee: "web/1", Relation: rel}), []string{"db/0", "web/1"}; !slices.Equal(got, want) {
		t.Errorf("revoke from web/1: stale %v, want %v", got, want)
	}
	if sees("web/1") {
		t.Error("web/1 still sees the secret after the revoke")
	}
	if got, want := change(model.SecretChange{Op: model.SecretOpGrant, ID: bare, Grantee: "web", Relation: rel}), []string{"db/0", "web/0", "web/1"}; !slices.Equal(got, want) {
		t.Errorf("grant to web: stale %v, want %v", got, want)
	}
	if !sees("web/0") || !sees("web/1") || sees("other/0") {
		t.Errorf("after the grant to web: web/0 sees it %v, web/1 %v, other/0 %v", sees("web/0"), sees("web/1"), sees("other/0"))
	}
	st, err := ctl.Status()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"db/1", "other/0", "other/1"} {
		if got := st.Units[name].Phase; got != Settled {
			t.Errorf("%s, outside the audience, is %s; want settled", name, got)
		}
	}
}

// TestSecretGrantRebuildsOnlyItsAudience: at a fixed point, a grant to
// one unit rebuilds the views of the secret's audience only (its owner
// and the grantee), and hands out the grantee alone, whose universe now
// shows the secret; none of the other units' universes is built.
func TestSecretGrantRebuildsOnlyItsAudience(t *testing.T) {
	ctx := context.Background()
	s := newMemStore()
	shop(t, s, 2, 3)
	ctl := NewController(s, Options{Window: time.Millisecond})
	settleAll(t, ctl)
	id, err := charmapi.NewSecretID()
	if err != nil {
		t.Fatal(err)
	}
	bare, _ := model.ParseSecretURI(id)
	var rel int
	_ = s.View(func(st *model.State) error {
		for _, r := range st.SortedRelations() {
			if st.Relations[r].Key != "" {
				rel = r
			}
		}
		return nil
	})
	apply := func(cs ...model.SecretChange) {
		t.Helper()
		resp, err := s.Apply(ctx, &model.Command{Op: model.OpResults, Results: []model.Result{{
			Unit: "db/0", Hash: hashOf(s, "db/0"), Seen: &model.Seen{Life: model.Alive}, Secrets: cs}}})
		if err != nil || len(resp.Skipped) > 0 {
			t.Fatalf("apply %v: %v %v", cs, err, resp)
		}
	}
	apply(model.SecretChange{Op: model.SecretOpAdd, ID: bare, Owner: model.SecretOwnerUnit, Sealed: "sealed"})
	settleAll(t, ctl)

	before := ctl.Stats()
	apply(model.SecretChange{Op: model.SecretOpGrant, ID: bare, Grantee: "web/1", Relation: rel})
	if ran := settleAll(t, ctl); !slices.Equal(ran, []string{"web/1"}) {
		t.Errorf("after the grant to web/1, ran %v; want web/1 alone", ran)
	}
	after := ctl.Stats()
	if n := (after.Rebuilt + after.Built) - (before.Rebuilt + before.Built); n != 2 {
		t.Errorf("%d universes built for a grant to one unit; want the audience's 2 (db/0, web/1)", n)
	}
}

// settleAll runs machine m's units with an active status until none is
// left to run, and returns those that ran, sorted.
func settleAll(t *testing.T, ctl *Controller) []string {
	t.Helper()
	ctx := context.Background()
	var ran []string
	for round := 0; round < 50; round++ {
		work, err := ctl.WaitForWork(ctx, "m", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(work) == 0 {
			slices.Sort(ran)
			return ran
		}
		var reps []wire.Report
		for _, w := range work {
			ran = append(ran, w.Unit)
			out, _ := json.Marshal(charmapi.NewResult().Active(""))
			reps = append(reps, wire.Report{Unit: w.Unit, Hash: w.Hash, Output: out})
		}
		if _, err := ctl.Accept(ctx, "m", reps); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("no fixed point after 50 rounds")
	return nil
}
