package main

import (
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi/charmtest"
	"github.com/fixpoint/fixpoint/charmapi/charmtest/charmdir"
)

func TestNegatesY(t *testing.T) {
	for y, x := range map[string]string{"": "1", "0": "1", "1": "0"} {
		b := charmtest.NewUniverse("oscillate-a/0")
		b.Provides("flip", "oscillate-b").Unit("oscillate-b/0", "y", y)
		charmtest.Run(t, charmtest.Func(reconcile), b.Universe()).
			ExpectLocal("flip:0", map[string]string{"x": x}).
			ExpectStatus("active", "x="+x)
	}
}

// TestPairHasNoFixedPoint shows what the simulator says about this charm
// related to oscillate-b (packed and run as a process): no schedule
// converges, and the report names x and y and who writes them.
func TestPairHasNoFixedPoint(t *testing.T) {
	env := charmdir.NewEnv("oscillate")
	env.Deploy("oscillate-a", "..")
	env.Deploy("oscillate-b", "../../oscillate-b")
	env.Relate("oscillate-a", "oscillate-b")
	env.Hook("oscillate-a", charmtest.Func(reconcile))
	rep, err := env.Simulate(t.Context(), charmtest.SimOptions{Schedules: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Converged() != 0 {
		t.Fatalf("the pair converged:\n%s", rep)
	}
	keys := strings.Join(rep.Keys(), "\n")
	if keys != "oscillate-a/0 relations.flip:0.local.x\noscillate-b/0 relations.flip:0.local.y" {
		t.Errorf("keys:\n%s\nreport:\n%s", keys, rep)
	}
}
