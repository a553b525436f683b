package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// impliedSummary is what the full status says a summary must be, worked
// out from its per-unit lines (and, for units on a lost machine, whose
// line hides the workload's word, from the state): the independent
// reading the summary is checked against.
func impliedSummary(full *Status, st *model.State, limit int) *Summary {
	out := &Summary{Index: full.Index, Generation: full.Generation, Environment: full.Environment, Applying: full.Applying,
		Converged: full.Converged, Summary: full.Summary, Services: map[string]*ServiceCounts{},
		Errors: []UnitBrief{}, Blocked: []UnitBrief{}, Stuck: []UnitBrief{}}
	for name, ss := range full.Services {
		out.Services[name] = &ServiceCounts{Leader: ss.Leader}
	}
	var errs, blocked, stuck []string
	for name, u := range full.Units {
		lost := u.Agent == "lost"
		isBlocked := st.Units[name].Status.State == "blocked"
		out.Phases.count(u.Phase, lost, isBlocked, 1)
		out.Services[u.Service].count(u.Phase, lost, isBlocked, 1)
		if u.Phase == Error {
			errs = append(errs, name)
		}
		if u.Status.State == "blocked" {
			blocked = append(blocked, name)
		}
		if u.Phase != Settled {
			stuck = append(stuck, name)
		}
	}
	byUnit := func(names []string) {
		sort.Slice(names, func(i, j int) bool { return model.UnitLess(names[i], names[j]) })
	}
	byUnit(errs)
	byUnit(blocked)
	sort.Slice(stuck, func(i, j int) bool {
		a, b := full.Units[stuck[i]], full.Units[stuck[j]]
		if !a.Since.Equal(b.Since) {
			return a.Since.Before(b.Since)
		}
		return model.UnitLess(stuck[i], stuck[j])
	})
	for i, n := range errs {
		if i == limit {
			out.MoreErrors = len(errs) - limit
			break
		}
		u := full.Units[n]
		out.Errors = append(out.Errors, UnitBrief{Unit: n, Phase: u.Phase, Message: u.Error, Since: u.Since})
	}
	for i, n := range blocked {
		if i == limit {
			out.MoreBlocked = len(blocked) - limit
			break
		}
		u := full.Units[n]
		out.Blocked = append(out.Blocked, UnitBrief{Unit: n, Phase: u.Phase, Message: u.Status.Message})
	}
	for i, n := range stuck {
		if i == stuckLimit {
			out.MoreStuck = len(stuck) - stuckLimit
			break
		}
		u := full.Units[n]
		out.Stuck = append(out.Stuck, UnitBrief{Unit: n, Phase: u.Phase, Since: u.Since})
	}
	for _, m := range full.LostMachines {
		if len(m.Units) > limit {
			m = LostMachine{Machine: m.Machine, Units: m.Units[:limit], MoreUnits: len(m.Units) - limit}
		}
		out.LostMachines = append(out.LostMachines, m)
	}
	return out
}

// TestSummaryIsWhatStatusImplies drives environments into random mixes of
// phases (units left claimed, failed, blocked, settled, leases run out,
// a machine lost) and checks that the summary says exactly what the full
// status implies: counts, lists and their "more", the first line.
func TestSummaryIsWhatStatusImplies(t *testing.T) {
	ctx := context.Background()
	for seed := int64(0); seed < 40; seed++ {
		rng := rand.New(rand.NewSource(seed))
		s := newMemStore()
		pairs(t, s, 2, 1+rng.Intn(6))
		clock := &fakeClock{t: time.Unix(1_000_000, 0)}
		ctl := NewController(s, Options{Window: 1, Now: clock.Now, Lease: time.Minute})
		// Asked after every round, the summary recounts what moved
		// since the last one (recount.go); each must be what a walk of
		// every unit would say.
		check := func(when string) {
			t.Helper()
			full, err := ctl.Status()
			if err != nil {
				t.Fatal(err)
			}
			limit := 1 + rng.Intn(3)
			got, err := ctl.Summary(limit)
			if err != nil {
				t.Fatal(err)
			}
			var want *Summary
			_ = s.View(func(st *model.State) error {
				want = impliedSummary(full, st, limit)
				return nil
			})
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if string(g) != string(w) {
				t.Fatalf("seed %d, %s: summary\n%s\nwhat status implies\n%s", seed, when, g, w)
			}
		}
		for round := rng.Intn(8); round > 0; round-- {
			work, err := ctl.WaitForWork(ctx, "m", 1+rng.Intn(8), 0)
			if err != nil {
				t.Fatal(err)
			}
			var reps []wire.Report
			for _, w := range work {
				switch rng.Intn(5) {
				case 0:
					// Left claimed: reconciling until its lease ends.
				case 1:
					reps = append(reps, wire.Report{Unit: w.Unit, Hash: w.Hash, Error: "boom on " + w.Unit})
				case 2:
					out, _ := json.Marshal(charmapi.NewResult().Blockedf("%s needs a hand", w.Unit))
					reps = append(reps, wire.Report{Unit: w.Unit, Hash: w.Hash, Output: out})
				default:
					reps = append(reps, wire.Report{Unit: w.Unit, Hash: w.Hash, Output: run(w.Universe)})
				}
			}
			if _, err := ctl.Accept(ctx, "m", reps); err != nil {
				t.Fatal(err)
			}
			if rng.Intn(2) == 0 {
				check(fmt.Sprintf("%d rounds to go", round))
			}
			clock.Add(time.Duration(rng.Intn(40)) * time.Second)
			// What the lease watch's timer does on a real clock.
			ctl.work.expireLeases()
			if rng.Intn(4) == 0 {
				check(fmt.Sprintf("%d rounds to go, the clock moved", round))
			}
		}
		if seed%5 == 4 {
			if _, err := s.Apply(ctx, &model.Command{Op: model.OpLiveness, Liveness: &model.SetLiveness{Lost: map[string]bool{"m": true}}}); err != nil {
				t.Fatal(err)
			}
		}
		check("at the end")
	}
}

// TestLeaseExpiryMovesTheGeneration: a claim whose lease runs out turns
// its unit from reconciling back to pending with no entry and no report;
// status waiters must hear of it then, and only then.
func TestLeaseExpiryMovesTheGeneration(t *testing.T) {
	s := newMemStore()
	shop(t, s, 1, 1)
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	ctl := NewController(s, Options{Window: 1, Now: clock.Now, Lease: time.Minute})
	work, err := ctl.WaitForWork(context.Background(), "m", 0, 0)
	if err != nil || len(work) == 0 {
		t.Fatalf("claim: %v, %d units", err, len(work))
	}
	before, _ := ctl.Summary(0)
	if before.Phases.Reconciling != len(work) {
		t.Fatalf("after the hand-out: %+v", before.Phases)
	}
	moved := ctl.ChangedSince(before.Generation)
	clock.Add(30 * time.Second)
	ctl.work.expireLeases()
	select {
	case <-moved:
		t.Fatal("the generation moved while every lease still ran")
	default:
	}
	clock.Add(31 * time.Second)
	ctl.work.expireLeases()
	select {
	case <-moved:
	default:
		t.Fatal("leases ran out and the generation did not move")
	}
	after, _ := ctl.Summary(0)
	if after.Generation == before.Generation || after.Phases.Reconciling != 0 || after.Phases.Pending != len(work) {
		t.Fatalf("after the leases ran out: generation %d (was %d), %+v", after.Generation, before.Generation, after.Phases)
	}
	again := ctl.ChangedSince(after.Generation)
	ctl.work.expireLeases()
	select {
	case <-again:
		t.Fatal("leases announced once moved the generation again")
	default:
	}
}

// TestLeaseWatchFiresByItself: nobody calls the controller, yet a status
// waiter learns that a lease ran out (the watch's own timer).
func TestLeaseWatchFiresByItself(t *testing.T) {
	s := newMemStore()
	shop(t, s, 1, 1)
	// The controller's clock stands still until the test moves it, so the
	// lease cannot end before the waiter has read the generation; the
	// watch's timer still runs on real time and finds it ended.
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	lease := 10 * time.Millisecond
	ctl := NewController(s, Options{Window: 1, Now: clock.Now, Lease: lease})
	work, err := ctl.WaitForWork(context.Background(), "m", 0, 0)
	if err != nil || len(work) == 0 {
		t.Fatalf("claim: %v, %d units", err, len(work))
	}
	sum, err := ctl.Summary(0)
	if err != nil {
		t.Fatal(err)
	}
	gen := sum.Generation
	clock.Add(2 * lease)
	select {
	case <-ctl.ChangedSince(gen):
	case <-time.After(time.Minute):
		t.Fatal("no wake a minute after a 10 ms lease ran out")
	}
	if sum, _ := ctl.Summary(0); sum.Phases.Reconciling != 0 {
		t.Fatalf("woken, but status still shows %+v", sum.Phases)
	}
}
