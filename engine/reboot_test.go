package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// TestRebootRestartsTheMachinesUnits: a unit's result asks for a reboot
// (juju-reboot); every unit on its machine, and none elsewhere, gets a
// universe with a higher boot whose events are stop, then start; once they
// ran, nothing more.
func TestRebootRestartsTheMachinesUnits(t *testing.T) {
	s := newMemStore()
	ctx := context.Background()
	charms := kvCharms()
	env := model.Environment{APIVersion: model.APIVersion, Name: "shop",
		Services: map[string]model.ServiceSpec{
			"db":  {CharmHash: "h-db", Units: intp(1), Placement: []string{"m1"}},
			"web": {CharmHash: "h-web", Units: intp(2), Placement: []string{"m1", "m2"}}},
		Relations: map[string][]string{"web-db": {"web:db", "db:db"}}}
	for i, m := range []string{"m1", "m2"} {
		if _, err := s.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: m, Address: "10.0.0." + string(rune('1'+i))}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		t.Fatal(err)
	}
	ctl := NewController(s, Options{Window: time.Millisecond})
	got := map[string]*charmapi.Universe{}
	for i := 0; i < 3; i++ {
		runMachine(t, ctl, "m1", got, ownHost)
		runMachine(t, ctl, "m2", got, ownHost)
	}
	// db/0 (on m1) asks for a reboot in its next run: the run in which
	// web/2 joins it.
	hooks := map[string][]string{}
	armed := true
	hook := func(u *charmapi.Universe) *charmapi.Result {
		for _, e := range u.Events {
			hooks[u.Unit] = append(hooks[u.Unit], e.Hook)
		}
		r := ownHost(u)
		if u.Unit == "db/0" && armed {
			armed, r.Reboot = false, true
		}
		return r
	}
	env.Services["web"] = model.ServiceSpec{CharmHash: "h-web", Units: intp(3), Placement: []string{"m1", "m2"}}
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		runMachine(t, ctl, "m1", got, hook)
		runMachine(t, ctl, "m2", got, hook)
	}
	_ = s.View(func(st *model.State) error {
		if b := st.Machines["m1"].Boots; b != 1 {
			t.Errorf("m1 boots = %d; want 1", b)
		}
		if b := st.Machines["m2"].Boots; b != 0 {
			t.Errorf("m2 boots = %d; want 0", b)
		}
		for _, u := range st.UnitsOf("web") {
			h := strings.Join(hooks[u.Name], " ")
			restarted := strings.Contains(h, "stop start")
			if u.Machine == "m1" && u.Name != "web/2" && !restarted {
				t.Errorf("%s on m1 ran %q; want stop, start", u.Name, h)
			}
			if u.Machine == "m2" && restarted {
				t.Errorf("%s on m2 ran %q; want no restart", u.Name, h)
			}
		}
		return nil
	})
	if h := strings.Join(hooks["db/0"], " "); !strings.HasPrefix(h, "db-relation-joined db-relation-changed stop start") {
		t.Errorf("db/0 ran %q; want web/2 joined, then stop and start", h)
	}
	if u := got["db/0"]; u == nil || u.Boot != 1 {
		t.Errorf("db/0's last universe: %+v; want boot 1", u)
	}
}
