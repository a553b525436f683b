package engine

import (
	"context"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"
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
		var batch []*look
		for _, m := range machines {
			batch = append(batch, &look{machine: m, done: make(chan struct{})})
		}
		c.batched.disp.servePass(batch)
		for i, m := range machines {
			want, err := c.single.Claim(ctx, m, 0, time.Duration(0))
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
			if cl := c.batched.disp.claimOf(got[0].Unit); cl == nil || cl.uni != got[0].Universe || cl.hash != got[0].Hash {
				t.Fatalf("%s: the claim of %s does not hold the universe handed out", c.name, got[0].Unit)
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

// TestAPassBuildsAheadAtMostMaxAhead: a pass whose looks would build more
// universes ahead than maxAhead serves the first looks whose universes
// fit (at least one) and leaves the others, in order, for the next pass;
// every look is answered with its unit.
func TestAPassBuildsAheadAtMostMaxAhead(t *testing.T) {
	defer func(n int) { maxAhead = n }(maxAhead)
	maxAhead = 2
	s, _, _ := tenMachinesSettled(t)
	ctl := NewController(s, Options{Window: 1})
	if err := ctl.Refresh(); err != nil {
		t.Fatal(err)
	}
	twoServices(t, s, 2)
	var looks []*look
	for _, m := range []string{"a0", "a1", "a2", "a3", "a4"} {
		looks = append(looks, &look{machine: m, done: make(chan struct{})})
	}
	batch := looks
	for pass := 1; len(batch) > 0; pass++ {
		if pass > 5 {
			t.Fatalf("%d looks still pending after five passes", len(batch))
		}
		ctl.disp.servePass(batch)
		left, _ := ctl.disp.looks.take()
		served := batch[:len(batch)-len(left)]
		if want := min(2, len(batch)); len(served) != want || !slices.Equal(left, batch[len(served):]) {
			t.Fatalf("pass %d served %d of %d looks and left %d; want %d served and the rest left in order", pass, len(served), len(batch), len(left), want)
		}
		for _, l := range served {
			if !closedNow(l.done) || l.err != nil || len(l.work) != 1 {
				t.Fatalf("pass %d: %s answered %v with %d units (err %v); want its unit", pass, l.machine, closedNow(l.done), len(l.work), l.err)
			}
		}
		for _, l := range left {
			if closedNow(l.done) {
				t.Fatalf("pass %d answered %s, which it left for the next", pass, l.machine)
			}
		}
		batch = left
	}
	// The last pass, of one look, builds in its claim: nothing to share.
	if st := ctl.Stats(); st.Passes != 3 || st.Prebuilt != 4 {
		t.Fatalf("%d passes, %d universes built ahead; want 3 and 4", st.Passes, st.Prebuilt)
	}
}

// TestServedWhenTheLooksAreServed: the controller says when a burst of
// hand-outs ended, so that the server collects garbage then (gcidle),
// not in the middle of the next burst; looks that found nothing (the
// agents' polls after their reports) are no burst.
func TestServedWhenTheLooksAreServed(t *testing.T) {
	mem, _, _ := tenMachinesSettled(t)
	served := make(chan struct{}, 16)
	ctl := NewController(mem, Options{Window: 1, Served: func() { served <- struct{}{} }})
	if work, err := ctl.Claim(context.Background(), "b0", 0, 0); err != nil || len(work) != 0 {
		t.Fatalf("claim with nothing to do = %d units, %v", len(work), err)
	}
	for deadline := time.Now().Add(time.Minute); ; runtime.Gosched() {
		if !ctl.disp.looks.isServing() {
			break
		}
		if time.Now().After(deadline) { // bounds a failure only
			t.Fatal("the look queue still serving a minute after its one look was answered")
		}
	}
	if len(served) != 0 {
		t.Fatal("a pass that handed out nothing was taken for the end of a burst")
	}
	twoServices(t, mem, 2)
	work, err := ctl.Claim(context.Background(), "a0", 0, 0)
	if err != nil || len(work) != 1 {
		t.Fatalf("claim after a change of a = %d units, %v; want a0's unit", len(work), err)
	}
	select {
	case <-served:
	case <-time.After(time.Minute): // bounds a failure only
		t.Fatal("the look was served and Served was not called")
	}
}
