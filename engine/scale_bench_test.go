package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/fixpoint/fixpoint/engine/ledger"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// pairs deploys n pairs of services, db<i> (k units, peers) related to
// web<i> (k units, peers): 2·n·k units in all, each seeing about 2·k.
func pairs(tb testing.TB, s interface {
	Apply(context.Context, *model.Command) (*model.Response, error)
}, n, k int) {
	charms := map[string]*model.Charm{
		"h-db":  {Hash: "h-db", Meta: model.CharmMeta{Name: "db", Provides: map[string]model.Endpoint{"db": {Interface: "kv"}}, Peers: map[string]model.Endpoint{"cluster": {Interface: "c"}}}},
		"h-web": {Hash: "h-web", Meta: model.CharmMeta{Name: "web", Requires: map[string]model.Endpoint{"db": {Interface: "kv"}}, Peers: map[string]model.Endpoint{"cluster": {Interface: "w"}}}},
	}
	env := model.Environment{APIVersion: model.APIVersion, Name: "big", Services: map[string]model.ServiceSpec{}, Relations: map[string][]string{}}
	for i := 0; i < n; i++ {
		db, web := fmt.Sprintf("db%d", i), fmt.Sprintf("web%d", i)
		env.Services[db] = model.ServiceSpec{CharmHash: "h-db", Units: intp(k)}
		env.Services[web] = model.ServiceSpec{CharmHash: "h-web", Units: intp(k)}
		env.Relations[fmt.Sprintf("r%d", i)] = []string{web + ":db", db + ":db"}
	}
	ctx := context.Background()
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m", Address: "10.0.0.1"}}); err != nil {
		tb.Fatal(err)
	}
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		tb.Fatal(err)
	}
}

// converge runs every stale unit with the Go charm logic until nothing is
// stale, batching up to 64 results per entry as an agent would.
func converge(tb testing.TB, ctl *Controller) int {
	ctx := context.Background()
	runs := 0
	for {
		work, err := ctl.WaitForWork(ctx, "m", 64, 0)
		if err != nil {
			tb.Fatal(err)
		}
		if len(work) == 0 {
			return runs
		}
		reps := make([]wire.Report, len(work))
		for i, w := range work {
			reps[i] = wire.Report{Unit: w.Unit, Hash: w.Hash, Output: run(w.Universe)}
		}
		runs += len(work)
		if _, err := ctl.Accept(ctx, "m", reps); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkSingleChange measures, in a converged environment of 10,000
// units (100 pairs of 50-unit services), what one unit's settings change
// costs the control plane: the universes rebuilt and bytes hashed until
// the fixed point again, against the units that can see the change.
func BenchmarkSingleChange(b *testing.B) {
	s := newMemStore()
	pairs(b, s, 100, 50)
	ctl := NewController(s, Options{Window: 1})
	first := converge(b, ctl)
	b.Logf("10,000 units converged in %d runs (%.2f per unit)", first, float64(first)/10000)
	var seers, rebuilt, hashed, runs int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		unit := fmt.Sprintf("web%d/%d", i%100, i%50)
		var h string
		var see int
		_ = s.View(func(st *model.State) error {
			uni, _ := Build(st, unit)
			h = Hash(uni)
			set := map[string]bool{}
			ledger.Watchers(st, unit, relOfState(st, unit, "cluster"), set)
			see = len(set)
			return nil
		})
		before := ctl.Stats()
		// The unit writes a new value into its peer settings: everyone
		// who sees it (its peers and the db units) is woken, nobody else.
		_, err := s.Apply(context.Background(), &model.Command{Op: model.OpResults, Results: []model.Result{{
			Unit: unit, Hash: h, Seen: &model.Seen{Life: model.Alive},
			Settings: map[int]map[string]string{relOf(s, unit, "cluster"): {"peers": "changed", "bump": fmt.Sprint(i)}},
		}}})
		if err != nil {
			b.Fatal(err)
		}
		n := converge(b, ctl)
		after := ctl.Stats()
		seers += int64(see)
		runs += int64(n)
		rebuilt += after.Rebuilt - before.Rebuilt
		hashed += after.HashedBytes - before.HashedBytes
	}
	b.ReportMetric(float64(seers)/float64(b.N), "seers/change")
	b.ReportMetric(float64(rebuilt)/float64(b.N), "rebuilt/change")
	b.ReportMetric(float64(runs)/float64(b.N), "runs/change")
	b.ReportMetric(float64(hashed)/float64(b.N), "hashedB/change")
}

func relOfState(st *model.State, unit, endpoint string) int {
	for _, r := range st.RelationsOf(st.Units[unit].Service) {
		if ep, ok := r.Endpoint(st.Units[unit].Service); ok && ep.Name == endpoint {
			return r.ID
		}
	}
	return -1
}

// peerWrite has unit write settings into its peer relation ("cluster"),
// as its reconcile would: everyone who sees it gets a new universe.
func peerWrite(tb testing.TB, s *memStore, unit string, settings map[string]string) {
	var h string
	_ = s.View(func(st *model.State) error {
		uni, _ := Build(st, unit)
		h = Hash(uni)
		return nil
	})
	if _, err := s.Apply(context.Background(), &model.Command{Op: model.OpResults, Results: []model.Result{{
		Unit: unit, Hash: h, Seen: &model.Seen{Life: model.Alive},
		Settings: map[int]map[string]string{relOf(s, unit, "cluster"): settings},
	}}}); err != nil {
		tb.Fatal(err)
	}
}

// relOf is the id of unit's relation over endpoint.
func relOf(s *memStore, unit, endpoint string) int {
	id := -1
	_ = s.View(func(st *model.State) error {
		for _, r := range st.RelationsOf(st.Units[unit].Service) {
			if ep, ok := r.Endpoint(st.Units[unit].Service); ok && ep.Name == endpoint {
				id = r.ID
			}
		}
		return nil
	})
	return id
}
