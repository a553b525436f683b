package engine

import (
	"fmt"
	"testing"
)

// TestASummaryRecountsWhatMoved pins what a status summary costs at a
// fixed point: the units it recounts are none after a change that moves no
// unit, and those that see a one-unit change after one, however many
// units the environment has (recount.go). Before the tally every summary
// walked every unit.
func TestASummaryRecountsWhatMoved(t *testing.T) {
	type cost struct{ noop, settings, settled int64 }
	costs := map[int]cost{}
	for _, n := range []int{2, 20} {
		s := newMemStore()
		pairs(t, s, n, 10)
		ctl := NewController(s, Options{Window: 1})
		converge(t, ctl)
		summary := func() (*Summary, int64) {
			t.Helper()
			before := ctl.Stats().Recounted
			sum, err := ctl.Summary(SummaryLimit)
			if err != nil {
				t.Fatal(err)
			}
			return sum, ctl.Stats().Recounted - before
		}
		if sum, _ := summary(); !sum.Converged || sum.Phases.Units != 2*n*10 {
			t.Fatalf("%d pairs: not converged: %+v", n, sum.Phases)
		}
		var c cost
		ctl.NoteChange() // the generation moves, no unit does
		_, c.noop = summary()

		// web0/0 writes its peer settings: its peers and db0's units
		// see it.
		peerWrite(t, s, "web0/0", map[string]string{"peers": "changed"})
		sum, recounted := summary()
		c.settings = recounted
		if sum.Converged || sum.Phases.Pending == 0 {
			t.Fatalf("%d pairs: the change moved no unit: %+v", n, sum.Phases)
		}
		converge(t, ctl)
		sum, c.settled = summary()
		// web0/0's written settings are not what its charm writes: it
		// is declared diverging, the others settle.
		if sum.Phases.Pending+sum.Phases.Reconciling != 0 || sum.Phases.Error != 1 {
			t.Fatalf("%d pairs: not at a fixed point again: %+v %+v", n, sum.Phases, sum.Errors)
		}
		costs[n] = c
	}
	small, big := costs[2], costs[20]
	if small != big {
		t.Fatalf("units recounted grew with the environment: 40 units %+v, 400 units %+v", small, big)
	}
	if small.noop != 0 || small.settings == 0 || small.settings > 20 {
		t.Fatalf("units recounted: %+v; want none after a no-op, and at most the 20 units of web0 and db0 after a change they see", small)
	}
	t.Logf("units recounted, 40 and 400 units: %s", fmt.Sprint(small))
}
