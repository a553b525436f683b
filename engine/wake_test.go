package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// twoServices deploys a and b, five units each, a pinned to machines a0..a4
// and b to b0..b4, with config option n of a set to n.
func twoServices(t *testing.T, s *memStore, n int) {
	t.Helper()
	charms := map[string]*model.Charm{"h-x": {Hash: "h-x", Meta: model.CharmMeta{Name: "x",
		Options: map[string]model.Option{"n": {Type: "int", Default: float64(0)}}}}}
	env := model.Environment{APIVersion: model.APIVersion, Name: "wake", Services: map[string]model.ServiceSpec{
		"a": {CharmHash: "h-x", Units: intp(5), Config: map[string]any{"n": n}, Placement: []string{"a0", "a1", "a2", "a3", "a4"}},
		"b": {CharmHash: "h-x", Units: intp(5), Placement: []string{"b0", "b1", "b2", "b3", "b4"}},
	}}
	if _, err := s.Apply(context.Background(), &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		t.Fatal(err)
	}
}

// TestAChangeWakesOnlyTheMachinesWithWork: ten agents long-poll; a config
// change of service a wakes a's five machines, once each, and none of b's.
func TestAChangeWakesOnlyTheMachinesWithWork(t *testing.T) {
	s, ctl, machines := tenMachinesSettled(t)
	ctx := running(t, ctl)
	// Every agent long-polls.
	results := pollAll(ctx, ctl, machines)
	rafttest.Until(t, time.Minute, "every agent's poll asleep", func() bool {
		return ctl.Stats().Asleep == int64(len(machines))
	})
	before := ctl.Stats().Wakeups

	twoServices(t, s, 2)
	woken := map[string]bool{}
	for len(woken) < 5 {
		select {
		case g := <-results:
			if g.units != 1 || g.machine[0] != 'a' {
				t.Fatalf("%s returned %d units; only a's machines have work", g.machine, g.units)
			}
			woken[g.machine] = true
		case <-time.After(time.Minute):
			t.Fatalf("after a config change of a, only %v got work", woken)
		}
	}
	if n := ctl.Stats().Wakeups - before; n != 5 {
		t.Fatalf("a change to a's five units woke %d polls; want 5 (none of b's five)", n)
	}
	// A heartbeat that changes nothing wakes nobody.
	ctl.ReleaseExcept("b0", nil)
	ctl.Heartbeat("b1")
	if n := ctl.Stats().Wakeups - before; n != 5 {
		t.Fatalf("heartbeats woke %d more polls", n-5)
	}
}

// running runs ctl until the test ends, and returns a context that ends
// then.
func running(t *testing.T, ctl *Controller) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ctl.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return ctx
}

// polled is what one machine's long poll returned.
type polled struct {
	machine string
	units   int
}

// pollAll long-polls the work of each machine, once, until ctx ends.
func pollAll(ctx context.Context, ctl *Controller, machines []string) <-chan polled {
	results := make(chan polled, len(machines))
	for _, m := range machines {
		go func() {
			work, _ := ctl.WaitForWork(ctx, m, 0, time.Hour)
			results <- polled{m, len(work)}
		}()
	}
	return results
}

// tenMachinesSettled is services a and b (twoServices), one unit on each
// of ten machines a0-a4 and b0-b4, after every unit ran once.
func tenMachinesSettled(t *testing.T) (*memStore, *Controller, []string) {
	t.Helper()
	s := newMemStore()
	ctx := context.Background()
	var machines []string
	for _, svc := range []string{"a", "b"} {
		for i := 0; i < 5; i++ {
			m := fmt.Sprintf("%s%d", svc, i)
			machines = append(machines, m)
			if _, err := s.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: m, Address: "10.0.0.1"}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	twoServices(t, s, 1)
	ctl := NewController(s, Options{Window: 1})
	for _, m := range machines {
		work, err := ctl.WaitForWork(ctx, m, 0, 0)
		if err != nil || len(work) != 1 {
			t.Fatalf("%s: claim = %d units, %v; want its one unit", m, len(work), err)
		}
		if _, err := ctl.Accept(ctx, m, []wire.Report{{Unit: work[0].Unit, Hash: work[0].Hash, Output: []byte(`{}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	return s, ctl, machines
}

// closedNow reports whether ch is closed, without waiting.
func closedNow(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
