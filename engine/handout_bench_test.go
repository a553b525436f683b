package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

// spread deploys units units as 50-unit db/web pairs with peers (as
// bench/scale does) over machines registered machines.
func spread(tb testing.TB, s *memStore, units, machines int) {
	ctx := context.Background()
	for m := range machines {
		if _, err := s.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: fmt.Sprintf("m%d", m), Address: "10.0.0.1"}}); err != nil {
			tb.Fatal(err)
		}
	}
	charms := map[string]*model.Charm{
		"h-db":  {Hash: "h-db", Meta: model.CharmMeta{Name: "db", Provides: map[string]model.Endpoint{"db": {Interface: "kv"}}, Peers: map[string]model.Endpoint{"cluster": {Interface: "c"}}}},
		"h-web": {Hash: "h-web", Meta: model.CharmMeta{Name: "web", Requires: map[string]model.Endpoint{"db": {Interface: "kv"}}, Peers: map[string]model.Endpoint{"cluster": {Interface: "w"}}}},
	}
	env := model.Environment{APIVersion: model.APIVersion, Name: "big", Services: map[string]model.ServiceSpec{}, Relations: map[string][]string{}}
	for i := range units / 100 {
		db, web := fmt.Sprintf("db%d", i), fmt.Sprintf("web%d", i)
		env.Services[db] = model.ServiceSpec{CharmHash: "h-db", Units: intp(50)}
		env.Services[web] = model.ServiceSpec{CharmHash: "h-web", Units: intp(50)}
		env.Relations[fmt.Sprintf("r%d", i)] = []string{web + ":db", db + ":db"}
	}
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		tb.Fatal(err)
	}
}

// handOutSetups keeps each size's deployed controller across the
// benchmark's runs: deploying and hashing 100,000 universes takes longer
// than the hand-outs measured.
var handOutSetups = map[string]*Controller{}

// BenchmarkHandOut measures one hand-out (a Claim of one unit) right
// after a deploy, with every unit queued in wave 0, spread over 10 or 100
// machines (bench/scale runs 10 agents): what deciding what a machine runs
// costs as the queue grows. The claim is dropped after each hand-out, as
// a report would drop it, so the queue stays full.
func BenchmarkHandOut(b *testing.B) {
	for _, size := range []struct{ units, machines int }{{1000, 10}, {10000, 10}, {10000, 100}, {100000, 10}} {
		name := fmt.Sprintf("units=%d/machines=%d", size.units, size.machines)
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			ctl := handOutSetups[name]
			if ctl == nil {
				s := newMemStore()
				spread(b, s, size.units, size.machines)
				ctl = NewController(s, Options{Window: 1})
				handOutSetups[name] = ctl
			}
			handOut := func(i int) {
				m := fmt.Sprintf("m%d", i%size.machines)
				work, err := ctl.WaitForWork(ctx, m, 1, 0)
				if err != nil || len(work) != 1 {
					b.Fatalf("claim: %d units, %v", len(work), err)
				}
				// Given back, as by an agent that left before its answer:
				// the unit is handed out again.
				ctl.work.apply(ctl.work.ledger.GiveBack(m, work))
			}
			handOut(0) // builds every view
			b.ResetTimer()
			for i := range b.N {
				handOut(i)
			}
		})
	}
}
