package fleet_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/fleet"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// TestLivenessIsTheClusters: the fleet judges the cluster's machines
// once, whichever environment's controller heard their agents. A
// machine never heard is lost in every environment; one whose agent
// waits in a poll served by both environments stays alive.
func TestLivenessIsTheClusters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := openStore(t)
	f := fleet.New(cluster{s}, engine.Options{IsLeader: s.IsLeader, AgentTTL: time.Second})
	run, stop := context.WithCancel(ctx)
	done := f.Start(run)
	defer func() {
		stop()
		<-done
	}()
	addEnv(t, ctx, s, f, "dev")
	for _, m := range []string{"m1", "m2"} {
		if _, err := s.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: m, Address: "10.0.0.1"}}); err != nil {
			t.Fatal(err)
		}
	}
	polling := make(chan error, 1)
	pctx, endPoll := context.WithCancel(ctx)
	go func() {
		_, err := f.WaitForWork(pctx, "m2", 10, time.Minute, true)
		polling <- err
	}()
	lost := func(env, machine string) bool {
		var out bool
		_ = s.Env(env).View(func(st *model.State) error {
			out = st.Machines[machine] != nil && st.Machines[machine].Lost
			return nil
		})
		return out
	}
	rafttest.Eventually(t, time.Minute, "m1 lost in every environment", func() error {
		if !lost("", "m1") || !lost("dev", "m1") {
			return errors.New("not yet")
		}
		return nil
	})
	if lost("", "m2") || lost("dev", "m2") {
		t.Error("m2, whose agent is waiting for work, was marked lost")
	}
	endPoll()
	if err := <-polling; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}
