package main

import (
	"testing"

	"github.com/fixpoint/fixpoint/charmapi/charmtest"
)

func TestCopiesX(t *testing.T) {
	for x, y := range map[string]string{"": "0", "0": "0", "1": "1"} {
		b := charmtest.NewUniverse("oscillate-b/0")
		b.Requires("flip", "oscillate-a").Unit("oscillate-a/0", "x", x)
		charmtest.Run(t, charmtest.Func(reconcile), b.Universe()).
			ExpectLocal("flip:0", map[string]string{"y": y}).
			ExpectStatus("active", "y="+y)
	}
	charmtest.Run(t, charmtest.Func(reconcile), charmtest.NewUniverse("oscillate-b/0").Universe()).
		ExpectRelations().
		ExpectStatus("blocked", "needs a flip relation")
}
