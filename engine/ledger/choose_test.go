package ledger

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// fullWalk is how the controller chose before the queue kept an index:
// every claim and every queued unit through schedule.Choose, and the
// earliest wait of machine's queued units. The test's oracle. Called with
// mu.
func (d *Ledger) fullWalk(st *model.State, machine string, now time.Time) schedule.Choice {
	var next time.Time
	cands := func(yield func(schedule.Candidate) bool) {
		for name, cl := range d.claims {
			if v := d.stale.View(name); v != nil && now.Before(cl.until) && !cl.timer {
				if !yield(schedule.Candidate{Name: name, Hash: v.Hash, Machine: v.Machine, Member: v.Member, Claimed: true}) {
					return
				}
			}
		}
		for name, at := range d.queue.All() {
			v := d.stale.View(name)
			if v == nil {
				continue
			}
			if cl, ok := d.claims[name]; ok && now.Before(cl.until) {
				continue
			}
			if now.Before(at) {
				if v.Machine == machine && !schedule.Lost(st, v.Machine) && (next.IsZero() || at.Before(next)) {
					next = at
				}
				continue
			}
			if !yield(schedule.Candidate{Name: name, Hash: v.Hash, Machine: v.Machine, Member: v.Member, Moved: d.stale.behind(name) == ViewHashUnknown}) {
				return
			}
		}
	}
	ch := schedule.Choose(st, cands, machine, now)
	if !ch.Next.IsZero() && (next.IsZero() || ch.Next.Before(next)) {
		next = ch.Next
	}
	ch.Next = next
	return ch
}

// indexEnv is db, web and two chain services of an old-hook charm (so
// that update-status runs too) on three machines; option n of chain0 is
// what an operator changes.
func indexEnv(n int) (model.Environment, map[string]*model.Charm) {
	charms := map[string]*model.Charm{
		"h-db":  {Hash: "h-db", Meta: model.CharmMeta{Name: "db", Provides: map[string]model.Endpoint{"db": {Interface: "kv"}}, Peers: map[string]model.Endpoint{"cluster": {Interface: "c"}}}},
		"h-web": {Hash: "h-web", Meta: model.CharmMeta{Name: "web", Requires: map[string]model.Endpoint{"db": {Interface: "kv"}}, Peers: map[string]model.Endpoint{"cluster": {Interface: "w"}}}},
		"h-chain": {Hash: "h-chain", Legacy: true, Meta: model.CharmMeta{Name: "chain", Requires: map[string]model.Endpoint{"in": {Interface: "link"}}, Provides: map[string]model.Endpoint{"out": {Interface: "link"}},
			Peers: map[string]model.Endpoint{"peer": {Interface: "p"}}, Options: map[string]model.Option{"n": {Type: "int", Default: float64(0)}}}},
	}
	env := model.Environment{APIVersion: model.APIVersion, Name: "index",
		Services: map[string]model.ServiceSpec{
			"db":     {CharmHash: "h-db", Units: intp(3)},
			"web":    {CharmHash: "h-web", Units: intp(4)},
			"chain0": {CharmHash: "h-chain", Units: intp(3), Config: map[string]any{"n": n}},
			"chain1": {CharmHash: "h-chain", Units: intp(3)},
		},
		Relations: map[string][]string{"web-db": {"web:db", "db:db"}, "link": {"chain0:out", "chain1:in"}}}
	return env, charms
}

// TestIndexedChoiceIsTheFullWalk drives a ledger through random
// hand-outs, reports (some failing), releases, heartbeats that drop
// claims, leases running out, lost and returning machines, operator
// changes that start new waves, resolutions and time passing; after every
// step the queue's index answers, for every machine, what the walk over
// every claim and queued unit answers.
func TestIndexedChoiceIsTheFullWalk(t *testing.T) {
	seeds, steps := 40, 300
	if testing.Short() {
		seeds = 4
	}
	machines := []string{"m", "n", "o"}
	var compared, ran int
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 16))
		w := newWorld(t)
		for _, m := range machines {
			w.apply(&model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: m, Address: "10.0.0." + m}})
		}
		config := 0
		deploy := func() {
			env, charms := indexEnv(config)
			w.apply(&model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}})
		}
		deploy()
		now := time.Unix(1_000_000, 0)
		l := New(Options{Backoff: schedule.DefaultBackoff, Lease: 3 * time.Minute, UpdateStatus: 4 * time.Minute, Now: func() time.Time { return now }, Changes: w.changes}, standIn)
		inFlight := map[string][]wire.Work{}
		lost := map[string]bool{}
		var trail []string
		for step := range steps {
			m := machines[rng.IntN(len(machines))]
			switch op := rng.IntN(10); op {
			case 0, 1, 2:
				var work []wire.Work
				l.ClaimEach(w.st, nil, func(claim func(string, int) ([]wire.Work, time.Time)) {
					work, _ = claim(m, rng.IntN(4))
				}).Done()
				inFlight[m] = append(inFlight[m], work...)
				ran += len(work)
				trail = append(trail, fmt.Sprintf("claim %s: %d", m, len(work)))
			case 3, 4:
				var reps []wire.Report
				for _, w := range inFlight[m] {
					rep := wire.Report{Unit: w.Unit, Hash: w.Hash, Output: []byte(`{}`)}
					if rng.IntN(4) == 0 {
						rep.Output, rep.Error = nil, "exit status 1"
					}
					reps = append(reps, rep)
				}
				inFlight[m] = nil
				results, _, owed := l.Accept(m, reps, now)
				owed.Done()
				if len(results) > 0 {
					w.apply(&model.Command{Op: model.OpResults, Time: now.UnixNano(), Results: results})
					l.Refresh(w.st).Done()
					l.CloseReported(results).Done()
				}
				trail = append(trail, fmt.Sprintf("report %s: %d", m, len(reps)))
			case 5:
				l.Release(m).Done()
				inFlight[m] = nil
				trail = append(trail, "release "+m)
			case 6:
				// A heartbeat naming none of its runs drops the claims
				// past their grace.
				l.ReleaseExcept(m, nil).Done()
				inFlight[m] = nil
				trail = append(trail, "heartbeat "+m)
			case 7:
				now = now.Add(time.Duration(rng.IntN(90)) * time.Second)
				trail = append(trail, "time")
			case 8:
				lost[m] = !lost[m]
				w.apply(&model.Command{Op: model.OpLiveness, Time: now.UnixNano(), Liveness: &model.SetLiveness{Lost: lost}})
				trail = append(trail, fmt.Sprintf("lost %v", lost))
			case 9:
				if rng.IntN(2) == 0 {
					config++
					deploy()
					trail = append(trail, "new waves")
					break
				}
				var failed string
				for name, u := range w.st.Units {
					if u.Error != nil {
						failed = name
						break
					}
				}
				if failed != "" {
					w.apply(&model.Command{Op: model.OpResolve, Resolve: &model.ResolveUnit{Unit: failed}})
					trail = append(trail, "resolve "+failed)
				}
			}
			if len(trail) > 10 {
				trail = trail[1:]
			}
			l.lock()
			l.refreshLocked(w.st)
			for _, m := range machines {
				got, want := l.queue.Choose(w.st, m, now, l.entry), l.fullWalk(w.st, m, now)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d step %d machine %s: index %+v, full walk %+v; last steps %v", seed, step, m, got, want, trail)
				}
				compared++
			}
			l.unlock().Done()
		}
	}
	if ran == 0 {
		t.Fatalf("%d comparisons and no unit ever ran: the test tests nothing", compared)
	}
}
