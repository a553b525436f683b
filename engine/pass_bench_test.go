package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// BenchmarkPassOfLooks measures what the polls a config change wakes cost
// the controller: a 100-unit service with peers, one unit per machine,
// each machine's look after a change of the service's config, every unit
// having reconciled the one before. "pass" is
// one pass of the 100 looks (servePass: universes built ahead on every
// processor, claims under the lock); "one-at-a-time" is 100 passes of one
// look, which build under the lock as every look did before the looks
// were batched. ns/op is one change's hand-outs.
func BenchmarkPassOfLooks(b *testing.B) {
	const units = 100
	ctx := context.Background()
	s := newMemStore()
	var machines []string
	for i := range units {
		m := fmt.Sprintf("m%d", i)
		machines = append(machines, m)
		if _, err := s.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: m, Address: "10.0.0.1"}}); err != nil {
			b.Fatal(err)
		}
	}
	charms := map[string]*model.Charm{"h-db": {Hash: "h-db", Meta: model.CharmMeta{Name: "db",
		Peers:   map[string]model.Endpoint{"cluster": {Interface: "c"}},
		Options: map[string]model.Option{"n": {Type: "int", Default: float64(0)}}}}}
	change := func(n int) {
		env := model.Environment{APIVersion: model.APIVersion, Name: "pass", Services: map[string]model.ServiceSpec{
			"db": {CharmHash: "h-db", Units: intp(units), Config: map[string]any{"n": n}, Placement: machines}}}
		if _, err := s.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
			b.Fatal(err)
		}
	}
	change(0)
	n := 0
	for _, mode := range []string{"pass", "one-at-a-time"} {
		b.Run(mode, func(b *testing.B) {
			ctl := NewController(s, Options{Window: 1})
			for range b.N {
				b.StopTimer()
				n++
				change(n)
				if err := ctl.Refresh(); err != nil {
					b.Fatal(err)
				}
				batch := make([]*pollLook, len(machines))
				for i, m := range machines {
					batch[i] = newLook(ctl, m)
				}
				b.StartTimer()
				if mode == "pass" {
					ctl.work.servePass(batch)
				} else {
					for _, l := range batch {
						ctl.work.servePass([]*pollLook{l})
					}
				}
				b.StopTimer()
				for _, l := range batch {
					if len(l.work) != 1 {
						b.Fatalf("%s got %d units after a change of its unit's config", l.machine, len(l.work))
					}
					// Reconciled, as an agent reports: the next change's
					// events are the difference from this run, as they
					// are in a running environment.
					w := l.work[0]
					if _, err := ctl.Accept(ctx, l.machine, []wire.Report{{Unit: w.Unit, Hash: w.Hash, Output: []byte(`{}`)}}); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
			}
		})
	}
}
