package main

import (
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi/charmtest"
	"github.com/fixpoint/fixpoint/charmapi/charmtest/charmdir"
)

// TestPublishesTime runs the hook once: charmtest.Run would fail it,
// because two runs on the same universe return different times.
func TestPublishesTime(t *testing.T) {
	u := charmtest.NewUniverse("clock/0").Peer("ring").Unit("clock/1", "now", "1").Universe()
	res := charmtest.RunOnce(t, charmtest.Func(reconcile), u).ExpectStatus("active", "ticking with 1 peer")
	if res.Local("ring:0")["now"] == "" {
		t.Errorf("no time published: %v", res.Local("ring:0"))
	}
}

// TestIsNotAFunctionOfItsUniverse is what the simulator says about it.
func TestIsNotAFunctionOfItsUniverse(t *testing.T) {
	env := charmdir.NewEnv("clock")
	env.Deploy("clock", "..").Units(2)
	env.Hook("clock", charmtest.Func(reconcile))
	rep, err := env.Simulate(t.Context(), charmtest.SimOptions{Schedules: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || len(rep.Nondeterministic) != 2 || !strings.Contains(rep.String(), "relations.ring:0.local.now") {
		t.Fatalf("report:\n%s", rep)
	}
}
