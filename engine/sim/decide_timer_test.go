package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/events"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// TestControllerAndSimulatorTimeAlike holds the controller's update-status
// hand-outs to the simulator's TimerDue: random environments of old-hook
// charms are driven to their fixed point, then the clock jumps by random
// amounts around the interval, and at every step the units the controller
// wakes over all machines are those TimerDue lists (less those still
// running), each with update-status and nothing else. Some runs stay in
// flight for a while, so the units' last runs spread out.
func TestControllerAndSimulatorTimeAlike(t *testing.T) {
	envs := 12
	if testing.Short() {
		envs = 4
	}
	const every = 5 * time.Minute
	for seed := range envs {
		rng := rand.New(rand.NewPCG(uint64(seed), 17))
		s := &store{st: model.NewState(), changed: make(chan struct{})}
		randomEnv(t, s, rng)
		s.mu.Lock()
		for _, ch := range s.st.Charms {
			ch.Legacy = true
		}
		s.mu.Unlock()
		start := time.Unix(1_000_000, 0)
		now := start
		// Runs stay in flight for many intervals here: a lease that
		// long keeps their claims, as the test's own list of flights does.
		ctl := engine.NewController(s, engine.Options{Window: 1, Now: func() time.Time { return now }, UpdateStatus: every, Lease: 1000 * time.Hour})
		ctx := context.Background()
		lastRun := map[string]time.Time{}
		last := func(unit string) time.Time {
			if at, ok := lastRun[unit]; ok {
				return at
			}
			return start // the controller starts a unit's timer when it first sees it
		}
		type flight struct {
			w       wire.Work
			machine string
		}
		var inFlight []flight
		report := func(fs []flight) {
			for _, f := range fs {
				out, herr := propHook(f.w.Universe)
				if _, err := ctl.Accept(ctx, f.machine, []wire.Report{{Unit: f.w.Unit, Hash: f.w.Hash, Output: out, Error: herr}}); err != nil {
					t.Fatal(err)
				}
				lastRun[f.w.Unit] = now
			}
		}
		// The fixed point: the clock stands still but for retries, which
		// propHook's flaky first tries need. No timer fires on the way:
		// the jumps are shorter than the interval and every unit runs.
		for round := 0; ; round++ {
			if round == 400 {
				t.Fatalf("seed %d: no fixed point", seed)
			}
			var work []flight
			for m := range 3 {
				machine := fmt.Sprintf("m%d", m)
				ws, err := ctl.WaitForWork(ctx, machine, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range ws {
					work = append(work, flight{w, machine})
				}
			}
			if len(work) > 0 {
				report(work)
				continue
			}
			var failing bool
			_ = s.View(func(st *model.State) error {
				for _, u := range st.Units {
					failing = failing || u.Error != nil
				}
				return nil
			})
			if !failing {
				break
			}
			now = now.Add(20 * time.Second)
		}
		wakes := 0
		for step := range 40 {
			now = now.Add(time.Duration(rng.Int64N(int64(2 * every))))
			// A machine runs what is runnable (a failed update-status
			// is retried as one); only an idle one wakes its units.
			// Timer runs hold no wave, so what is in flight is left out
			// rather than counted as running.
			var want []string
			_ = s.View(func(st *model.State) error {
				flying := func(u string) bool {
					return slices.ContainsFunc(inFlight, func(f flight) bool { return f.w.Unit == u })
				}
				runnable := Runnable(st, func(string) bool { return false }, now)
				due := TimerDue(st, last, every, now)
				for m := range 3 {
					machine := fmt.Sprintf("m%d", m)
					on := func(list []string) []string {
						var out []string
						for _, u := range list {
							if st.Units[u].Machine == machine && !flying(u) {
								out = append(out, u)
							}
						}
						return out
					}
					if mine := on(runnable); len(mine) > 0 {
						want = append(want, mine...)
					} else {
						want = append(want, on(due)...)
					}
				}
				return nil
			})
			charmapi.SortUnits(want)
			var got []string
			for m := range 3 {
				machine := fmt.Sprintf("m%d", m)
				ws, err := ctl.WaitForWork(ctx, machine, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range ws {
					if evs := w.Universe.Events; len(evs) != 1 || evs[0].Hook != events.UpdateStatus {
						t.Fatalf("seed %d step %d: %s handed out with %v at the fixed point, want update-status alone", seed, step, w.Unit, evs)
					}
					got = append(got, w.Unit)
					inFlight = append(inFlight, flight{w, machine})
				}
			}
			charmapi.SortUnits(got)
			if !slices.Equal(got, want) {
				_ = s.View(func(st *model.State) error {
					for _, name := range st.SortedUnits() {
						u := st.Units[name]
						uni, _ := engine.Build(st, name)
						t.Logf("%s machine %s last %v reconciled %v hash %v err %+v", name, u.Machine, last(name).Sub(start), u.Reconciled == engine.Hash(uni), engine.Hash(uni), u.Error)
					}
					return nil
				})
				t.Fatalf("seed %d step %d (now %v): the controller wakes %v, TimerDue says %v", seed, step, now.Sub(start), got, want)
			}
			wakes += len(got)
			rng.Shuffle(len(inFlight), func(i, j int) { inFlight[i], inFlight[j] = inFlight[j], inFlight[i] })
			k := rng.IntN(len(inFlight) + 1)
			report(inFlight[:k])
			inFlight = slices.Clone(inFlight[k:])
		}
		// propHook fails some first tries, update-status ones too: report
		// what is in flight and let the retries run out.
		report(inFlight)
		inFlight = nil
		for i := 0; ; i++ {
			if i == 200 {
				t.Fatalf("seed %d: failed update-status runs are never retried to success", seed)
			}
			var failing bool
			_ = s.View(func(st *model.State) error {
				for _, u := range st.Units {
					failing = failing || u.Error != nil
				}
				return nil
			})
			if !failing {
				break
			}
			now = now.Add(20 * time.Second)
			for m := range 3 {
				machine := fmt.Sprintf("m%d", m)
				ws, err := ctl.WaitForWork(ctx, machine, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range ws {
					report([]flight{{w, machine}})
				}
			}
		}
		st, err := ctl.Status()
		if err != nil || !st.Converged {
			t.Fatalf("seed %d: timer runs unsettled the fixed point: %v %s", seed, err, st.Summary)
		}
		t.Logf("seed %d: %d update-status runs", seed, wakes)
	}
}
