package raftstore

import (
	"context"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// TestControllersPerEnvironment: an engine controller runs unchanged on
// an environment's view. Two controllers on one store each hand out only
// their environment's db/0, on the one machine registered for the
// cluster; a report through one lands in its environment alone, and the
// other controller rebuilds no universe for it.
func TestControllersPerEnvironment(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	n := newNode(t, testLogger(t), "n1")
	n.start(true, nil)
	settled(t, n)
	if _, err := n.s.Apply(ctx, deployCmd()); err != nil {
		t.Fatal(err)
	}
	if _, err := n.s.AddEnv(ctx, "dev", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := n.s.Env("dev").Apply(ctx, deployIn("dev")); err != nil {
		t.Fatal(err)
	}
	if _, err := n.s.Apply(ctx, machineCmd("m1", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}

	run, cancel := context.WithCancel(ctx)
	def := engine.NewController(n.s.Env(""), engine.Options{IsLeader: n.s.IsLeader})
	dev := engine.NewController(n.s.Env("dev"), engine.Options{IsLeader: n.s.IsLeader})
	stopped := []<-chan struct{}{def.Start(run), dev.Start(run)}
	t.Cleanup(func() {
		cancel()
		for _, done := range stopped {
			<-done
		}
	})

	claim := func(ctl *engine.Controller, env string) wire.Work {
		t.Helper()
		work, err := ctl.WaitForWork(ctx, "m1", 10, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(work) != 1 || work[0].Unit != "db/0" || work[0].Environment != env {
			t.Fatalf("%s's controller handed out %d units: %+v; want its own db/0", env, len(work), work)
		}
		return work[0]
	}
	claim(def, "test")
	before := def.Stats()
	w := claim(dev, "dev")
	devBefore := dev.Stats()
	if _, err := dev.Accept(ctx, "m1", []wire.Report{{Unit: w.Unit, Hash: w.Hash, Output: []byte(`{"status": {"state": "active"}}`)}}); err != nil {
		t.Fatal(err)
	}
	if err := def.Refresh(); err != nil {
		t.Fatal(err)
	}
	// An operator change in dev: every universe of dev is rebuilt, none
	// of the default environment's.
	two := deployIn("dev")
	units := 2
	two.Deploy.Env.Services["db"] = model.ServiceSpec{Charm: "./db", CharmHash: "h1", Units: &units}
	if _, err := n.s.Env("dev").Apply(ctx, two); err != nil {
		t.Fatal(err)
	}
	for _, ctl := range []*engine.Controller{def, dev} {
		if err := ctl.Refresh(); err != nil {
			t.Fatal(err)
		}
	}
	if after := def.Stats(); after.Rebuilt != before.Rebuilt || after.HashedBytes != before.HashedBytes {
		t.Errorf("a run and a deploy in dev rebuilt %d universes of the default environment", after.Rebuilt-before.Rebuilt)
	}
	if dev.Stats().Rebuilt == devBefore.Rebuilt {
		t.Error("the deploy in dev rebuilt none of dev's universes")
	}
	reconciles := func(env string) int {
		var n0 int
		if err := n.s.Env(env).View(func(st *model.State) error {
			n0 = st.Units["db/0"].Reconciles
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return n0
	}
	if reconciles("dev") != 1 || reconciles("") != 0 {
		t.Errorf("reconciles of db/0: dev %d, default %d; want the run in dev alone", reconciles("dev"), reconciles(""))
	}
	st, err := dev.Status()
	if err != nil {
		t.Fatal(err)
	}
	if u, ok := st.Units["db/0"]; !ok || u.Status.State != "active" || len(st.Units) != 2 {
		t.Errorf("dev's status: %+v; want db/0 active and db/1", st.Units)
	}
}
