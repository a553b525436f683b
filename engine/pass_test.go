package engine

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/ledger"
	"github.com/fixpoint/fixpoint/model"
)

// TestBatchedLooksHandOutWhatSingleLooksDo: the looks of the five machines
// of a, served in one pass with their universes built ahead outside the
// lock, hand out exactly what five looks one at a time hand out (unit,
// hash, universe with its events), and every one of them was built ahead.
// Both ways of a view: stale with its hash unknown (a controller that saw
// the change land), and queued with its hash known (a controller that
// starts after it).
func TestBatchedLooksHandOutWhatSingleLooksDo(t *testing.T) {
	ctx := context.Background()
	s, _, _ := tenMachinesSettled(t)
	machines := []string{"a0", "a1", "a2", "a3", "a4"}
	before := func() *Controller {
		ctl := NewController(s, Options{Window: 1})
		if err := ctl.Refresh(); err != nil {
			t.Fatal(err)
		}
		return ctl
	}
	batchedUnknown, singleUnknown := before(), before()
	twoServices(t, s, 2)
	batchedKnown, singleKnown := NewController(s, Options{Window: 1}), NewController(s, Options{Window: 1})

	for _, c := range []struct {
		name            string
		batched, single *Controller
	}{{"hash unknown", batchedUnknown, singleUnknown}, {"hash known", batchedKnown, singleKnown}} {
		var batch []*pollLook
		for _, m := range machines {
			batch = append(batch, newLook(c.batched, m))
		}
		c.batched.work.servePass(batch)
		for i, m := range machines {
			want, err := c.single.WaitForWork(ctx, m, 0, time.Duration(0))
			if err != nil || len(want) != 1 {
				t.Fatalf("%s: single look of %s: %d units, %v", c.name, m, len(want), err)
			}
			got := batch[i].work
			if batch[i].err != nil || len(got) != 1 {
				t.Fatalf("%s: batched look of %s: %d units, %v", c.name, m, len(got), batch[i].err)
			}
			if got[0].Unit != want[0].Unit || got[0].Hash != want[0].Hash || !reflect.DeepEqual(got[0].Universe, want[0].Universe) {
				t.Fatalf("%s: %s batched got %s %s %+v; one at a time %s %s %+v", c.name, m,
					got[0].Unit, got[0].Hash, got[0].Universe, want[0].Unit, want[0].Hash, want[0].Universe)
			}
			// Built ahead, it was encoded ahead: the bytes the answer
			// sends are the universe's.
			if enc := mustJSON(t, got[0].Universe); string(got[0].UniverseJSON) != string(enc) {
				t.Fatalf("%s: %s encoded ahead as\n%s\nnot\n%s", c.name, got[0].Unit, got[0].UniverseJSON, enc)
			}
		}
		bs, ss := c.batched.Stats(), c.single.Stats()
		if bs.Prebuilt != int64(len(machines)) || ss.Prebuilt != 0 {
			t.Fatalf("%s: %d universes built ahead in the pass of 5 looks (want 5), %d one at a time (want 0)", c.name, bs.Prebuilt, ss.Prebuilt)
		}
		if bs.Rebuilt != ss.Rebuilt || bs.Built != ss.Built || bs.HashedBytes != ss.HashedBytes {
			t.Fatalf("%s: batched work %+v; one at a time %+v", c.name, bs, ss)
		}
	}
}

// TestAPassBuildsAheadWithinItsBound: a pass whose looks would build
// more universes ahead than its bound serves the first looks whose
// universes fit (at least one) and leaves the others for the next pass;
// each look served has its units chosen to build.
func TestAPassBuildsAheadWithinItsBound(t *testing.T) {
	s, _, _ := tenMachinesSettled(t)
	ctl := NewController(s, Options{Window: 1})
	if err := ctl.Refresh(); err != nil {
		t.Fatal(err)
	}
	twoServices(t, s, 2)
	machines := []string{"a0", "a1", "a2", "a3", "a4"}
	for _, bound := range []int{1, 2, 5} {
		var jobs []string
		var served int
		_ = s.View(func(st *model.State) error {
			var w *ledger.Owed
			served, w = ctl.work.ledger.PlanPass(st, len(machines), func(i int) (string, int) { return machines[i], 0 },
				func(j ledger.AheadJob) { jobs = append(jobs, j.Name) }, bound)
			ctl.work.apply(w)
			return nil
		})
		if served != bound || len(jobs) != bound {
			t.Fatalf("bound %d: %d looks served, %d universes to build (%v); want %d and %d", bound, served, len(jobs), jobs, bound, bound)
		}
	}
}

// newLook is a work poll's look at machine's work, as WaitForWork makes
// it, for a test to serve in a pass.
func newLook(ctl *Controller, machine string) *pollLook {
	l := &pollLook{machine: machine, done: make(chan struct{})}
	l.sleep = ctl.work.waiters.NewPoll(machine, l)
	return l
}

// claimsHeld is how many claims ctl holds, as status reads them.
func claimsHeld(t *testing.T, ctl *Controller) (n int) {
	t.Helper()
	if err := ctl.store.View(func(st *model.State) error {
		n = len(ctl.work.claimsAt(st))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAPassBuildsAheadAboutItsBytes: a pass builds ahead as many
// universes as hold aheadBytes encoded at the last pass's mean size,
// within [minAhead, maxAhead]; before any pass, maxAhead.
func TestAPassBuildsAheadAboutItsBytes(t *testing.T) {
	s, _, _ := tenMachinesSettled(t)
	ctl := NewController(s, Options{Window: 1})
	if err := ctl.Refresh(); err != nil {
		t.Fatal(err)
	}
	twoServices(t, s, 2)
	var looks []*pollLook
	for _, m := range []string{"a0", "a1", "a2", "a3", "a4"} {
		looks = append(looks, newLook(ctl, m))
	}
	_ = s.View(func(st *model.State) error {
		ctl.work.buildAhead(st, looks)
		return nil
	})
	if ctl.work.aheadMean.Load() <= 0 {
		t.Fatal("a pass that built universes ahead left no mean size for the next")
	}
	var h handout
	for _, c := range []struct {
		mean int64
		want int
	}{
		{0, maxAhead},
		{1, maxAhead},
		{aheadBytes / 100, 100},
		{aheadBytes, minAhead},
		{1 << 40, minAhead},
	} {
		h.aheadMean.Store(c.mean)
		if got := h.aheadBound(); got != c.want {
			t.Errorf("mean %d bytes: %d universes ahead; want %d", c.mean, got, c.want)
		}
	}
}
