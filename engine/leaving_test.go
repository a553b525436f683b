package engine

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// TestLeavingUnitReadsItsOwnSettings scales db from two units to one: the
// dying db/1's last universe lists no relations, and carries its own last
// settings in the relation it is leaving under leaving, as Juju answers a
// unit's relation-get of itself in its -departed and -broken hooks.
func TestLeavingUnitReadsItsOwnSettings(t *testing.T) {
	s := newMemStore()
	ctx := context.Background()
	charms := kvCharms()
	deploy := func(dbUnits int) {
		t.Helper()
		env := model.Environment{APIVersion: model.APIVersion, Name: "shop",
			Services: map[string]model.ServiceSpec{
				"db":  {CharmHash: "h-db", Units: intp(dbUnits), Placement: []string{"m1"}},
				"web": {CharmHash: "h-web", Units: intp(1), Placement: []string{"m1"}}},
			Relations: map[string][]string{"web-db": {"web:db", "db:db"}}}
		if _, err := s.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m1", Address: "10.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	deploy(2)
	ctl := NewController(s, Options{Window: time.Millisecond})
	got := map[string]*charmapi.Universe{}
	run := func() { runMachine(t, ctl, "m1", got, ownHost) }
	run()
	if u := got["db/1"]; u == nil || u.Leaving != nil {
		t.Fatalf("alive db/1's universe = %+v; want no relations leaving", u)
	}
	deploy(1)
	run()
	u := got["db/1"]
	if u == nil || u.Life != "dying" || len(u.Relations) != 0 {
		t.Fatalf("db/1's last universe = %+v; want it dying, with no relations", u)
	}
	var ident string
	for _, e := range u.Events {
		if e.Hook == "db-relation-broken" {
			ident = e.Relation
		}
	}
	own := u.Leaving[ident]
	if ident == "" || own["host"] != "db/1" || own["private-address"] != "10.0.0.1" {
		t.Errorf("db/1's events %v, leaving %v; want db-relation-broken and its own settings in that relation", u.Events, u.Leaving)
	}
}

// ownHost is a hook that writes host=<unit> in each of its relations.
func ownHost(u *charmapi.Universe) *charmapi.Result {
	r := charmapi.NewResult()
	for _, rel := range u.Relations {
		r.SetLocal(rel.Ident, map[string]string{"host": u.Unit})
	}
	return r.Active("")
}

// runMachine runs what machine m's agent is given with hook until nothing
// is left, recording each unit's last universe in got.
func runMachine(t *testing.T, ctl *Controller, m string, got map[string]*charmapi.Universe, hook func(*charmapi.Universe) *charmapi.Result) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		work, err := ctl.WaitForWork(ctx, m, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(work) == 0 {
			return
		}
		var reps []wire.Report
		for _, w := range work {
			got[w.Unit] = w.Universe
			out, _ := json.Marshal(hook(w.Universe))
			reps = append(reps, wire.Report{Unit: w.Unit, Hash: w.Hash, Output: out})
		}
		if _, err := ctl.Accept(ctx, m, reps); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("machine %s never ran out of work", m)
}

// kvCharms are db, providing db over interface kv, and web, requiring it.
func kvCharms() map[string]*model.Charm {
	return map[string]*model.Charm{
		"h-db":  {Hash: "h-db", Meta: model.CharmMeta{Name: "db", Provides: map[string]model.Endpoint{"db": {Interface: "kv"}}}},
		"h-web": {Hash: "h-web", Meta: model.CharmMeta{Name: "web", Requires: map[string]model.Endpoint{"db": {Interface: "kv"}}}},
	}
}
