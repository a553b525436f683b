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

// TestDepartedSettingsReachTheDepartedHook removes db/1 while web/0's
// agent is down: db/1 tears down and leaves the state, and when web/0 runs
// again its universe still carries db/1's last settings under departed,
// with the departed event, as Juju keeps them readable in that hook. Once
// web/0 has reconciled, the state forgets them.
func TestDepartedSettingsReachTheDepartedHook(t *testing.T) {
	s := newMemStore()
	ctx := context.Background()
	charms := map[string]*model.Charm{
		"h-db":  {Hash: "h-db", Meta: model.CharmMeta{Name: "db", Provides: map[string]model.Endpoint{"db": {Interface: "kv"}}}},
		"h-web": {Hash: "h-web", Meta: model.CharmMeta{Name: "web", Requires: map[string]model.Endpoint{"db": {Interface: "kv"}}}},
	}
	deploy := func(dbUnits int) {
		t.Helper()
		env := model.Environment{APIVersion: model.APIVersion, Name: "shop",
			Services: map[string]model.ServiceSpec{
				"db":  {CharmHash: "h-db", Units: intp(dbUnits), Placement: []string{"m1"}},
				"web": {CharmHash: "h-web", Units: intp(1), Placement: []string{"m2"}}},
			Relations: map[string][]string{"web-db": {"web:db", "db:db"}}}
		if _, err := s.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
			t.Fatal(err)
		}
	}
	for i, m := range []string{"m1", "m2"} {
		if _, err := s.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: m, Address: "10.0.0." + string(rune('1'+i))}}); err != nil {
			t.Fatal(err)
		}
	}
	deploy(2)
	hook := func(u *charmapi.Universe) *charmapi.Result {
		r := charmapi.NewResult()
		for _, rel := range u.Relations {
			r.SetLocal(rel.Ident, map[string]string{"host": u.Unit})
		}
		return r.Active("")
	}
	ctl := NewController(s, Options{Window: time.Millisecond})
	// round runs what machine m's agent is given, until nothing is left.
	round := func(m string) map[string]*charmapi.Universe {
		t.Helper()
		got := map[string]*charmapi.Universe{}
		for i := 0; i < 20; i++ {
			work, err := ctl.WaitForWork(ctx, m, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(work) == 0 {
				return got
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
		return nil
	}
	for i := 0; i < 3; i++ {
		round("m1")
		round("m2")
	}
	deploy(1) // db/1 goes; web/0's agent (m2) is down meanwhile
	round("m1")
	_ = s.View(func(st *model.State) error {
		if _, ok := st.Units["db/1"]; ok {
			t.Fatal("db/1 was not removed after its teardown")
		}
		return nil
	})
	web := round("m2")["web/0"]
	if web == nil {
		t.Fatal("web/0 was given nothing to run after db/1 left")
	}
	rel := web.Relation("db")
	if rel == nil || rel.Departed["db/1"]["host"] != "db/1" {
		t.Fatalf("web/0's db relation = %+v; want db/1's last settings under departed", rel)
	}
	if _, still := rel.Units["db/1"]; still {
		t.Errorf("db/1 is still a member: %v", rel.Units)
	}
	found := false
	for _, e := range web.Events {
		found = found || e.Hook == "db-relation-departed" && e.RemoteUnit == "db/1"
	}
	if !found {
		t.Errorf("events %v; want db-relation-departed for db/1", web.Events)
	}
	_ = s.View(func(st *model.State) error {
		for _, r := range st.Relations {
			if len(r.Departed) != 0 {
				t.Errorf("relation %d still keeps departed settings %v after every unit saw db/1 go", r.ID, r.Departed)
			}
		}
		return nil
	})
	if u, err := ctl.Universe("web/0"); err != nil || u.Relation("db").Departed != nil {
		t.Errorf("web/0's next universe still has departed settings: %+v, %v", u, err)
	}
}
