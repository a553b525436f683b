package engine

import (
	"context"
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

func TestSubordinatesFollowTheirPrincipals(t *testing.T) {
	s := newMemStore()
	charms := map[string]*model.Charm{
		"h-web": {Hash: "h-web", Meta: model.CharmMeta{Name: "web"}},
		"h-log": {Hash: "h-log", Meta: model.CharmMeta{Name: "log", Subordinate: true,
			Requires: map[string]model.Endpoint{"host": {Interface: "juju-info", Scope: model.Container}}}},
	}
	deploy := func(webUnits int) {
		env := model.Environment{APIVersion: model.APIVersion, Name: "sub",
			Services:  map[string]model.ServiceSpec{"web": {CharmHash: "h-web", Units: intp(webUnits)}, "log": {CharmHash: "h-log"}},
			Relations: map[string][]string{"web-log": {"web:juju-info", "log:host"}}}
		if _, err := s.Apply(context.Background(), &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []string{"a", "b"} {
		if _, err := s.Apply(context.Background(), &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: m, Address: "10.0.0." + m}}); err != nil {
			t.Fatal(err)
		}
	}
	deploy(2)
	_ = s.View(func(st *model.State) error {
		if len(st.UnitsOf("log")) != 2 {
			t.Fatalf("log units: %v", st.SortedUnits())
		}
		for _, u := range st.UnitsOf("log") {
			p := st.Units[u.Principal]
			if p == nil || p.Machine != u.Machine {
				t.Fatalf("%s attached to %q on %s", u.Name, u.Principal, u.Machine)
			}
			uni, _ := Build(st, u.Name)
			host := uni.Relation("host")
			if host == nil || len(host.Units) != 1 || host.Units[u.Principal] == nil {
				t.Fatalf("%s sees %v, want only its principal %s", u.Name, host, u.Principal)
			}
		}
		uni, _ := Build(st, "web/0")
		if rel := uni.Relation("juju-info"); rel == nil || len(rel.Units) != 1 {
			t.Fatalf("web/0 sees %+v over juju-info, want its one subordinate", rel)
		}
		return nil
	})
	// Scaling the principal down takes its subordinate with it.
	deploy(1)
	_ = s.View(func(st *model.State) error {
		for _, u := range st.UnitsOf("log") {
			if u.Principal == "web/1" && u.Life == model.Alive {
				t.Fatalf("%s outlives its principal web/1", u.Name)
			}
		}
		return nil
	})
}
