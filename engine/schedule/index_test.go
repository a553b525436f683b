package schedule

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/model"
)

// world is a controller's worth of what Queue.Choose looks at, kept by
// the rules the controller keeps: the queue touches what it changes
// itself, and whatever moves a unit's view or record in the state touches
// it. Claims come and go untouched, as they do in the controller.
type world struct {
	st     *model.State
	q      *Queue
	views  map[string]Entry // Known, Hash, Machine, Member, Moved
	claims map[string]Entry // Claimed, Until, Timer
	now    time.Time
}

func (w *world) look(unit string) Entry {
	e := w.views[unit]
	if cl, ok := w.claims[unit]; ok && e.Known {
		e.Claimed, e.Until, e.Timer = true, cl.Until, cl.Timer
	}
	return e
}

// fullWalk is the walk Queue.Choose replaced, kept as its oracle: every
// claim and every queued unit, through Choose.
func (w *world) fullWalk(machine string) Choice {
	var next time.Time
	cands := func(yield func(Candidate) bool) {
		for name, cl := range w.claims {
			if v := w.views[name]; v.Known && w.now.Before(cl.Until) && !cl.Timer {
				if !yield(Candidate{Name: name, Hash: v.Hash, Machine: v.Machine, Member: v.Member, Claimed: true}) {
					return
				}
			}
		}
		for name, at := range w.q.All() {
			v := w.views[name]
			if !v.Known {
				continue
			}
			if cl, ok := w.claims[name]; ok && w.now.Before(cl.Until) {
				continue
			}
			if w.now.Before(at) {
				if v.Machine == machine && !Lost(w.st, v.Machine) && (next.IsZero() || at.Before(next)) {
					next = at
				}
				continue
			}
			if !yield(Candidate{Name: name, Hash: v.Hash, Machine: v.Machine, Member: v.Member, Moved: v.Moved}) {
				return
			}
		}
	}
	ch := Choose(w.st, cands, machine, w.now)
	if !ch.Next.IsZero() && (next.IsZero() || ch.Next.Before(next)) {
		next = ch.Next
	}
	ch.Next = next
	return ch
}

var machines = []string{"m0", "m1", "m2"}

func newWorld(rng *rand.Rand, units int) *world {
	w := &world{st: model.NewState(), q: NewQueue(Backoff{Min: 5 * time.Second, Max: time.Minute}),
		views: map[string]Entry{}, claims: map[string]Entry{}, now: time.Unix(1_000_000, 0)}
	for _, m := range machines {
		w.st.Machines[m] = &model.Machine{Name: m}
	}
	for i := range units {
		w.addUnit(rng, fmt.Sprintf("s%d/%d", i%3, i))
	}
	return w
}

func (w *world) addUnit(rng *rand.Rand, name string) {
	m := machines[rng.IntN(len(machines))]
	w.st.Units[name] = &model.Unit{Name: name, Machine: m, Life: model.Alive, Wave: rng.IntN(3), Reconciled: "h0"}
	w.views[name] = Entry{Known: true, Hash: fmt.Sprintf("h%d", rng.IntN(2)), Machine: m, Member: true}
	w.q.Add(name)
}

func (w *world) pick(rng *rand.Rand) string {
	n := rng.IntN(len(w.st.Units) + 1)
	for name := range w.st.Units {
		if n == 0 {
			return name
		}
		n--
	}
	return "gone/0"
}

// step makes one random change, as the controller would see it.
func (w *world) step(rng *rand.Rand) string {
	name := w.pick(rng)
	u := w.st.Units[name]
	at := w.now.Add(time.Duration(rng.IntN(120)-30) * time.Second)
	switch op := rng.IntN(20); {
	case op == 0:
		w.q.Add(name)
		return "add " + name
	case op == 1:
		w.q.AddAfter(name, at)
		return "add after " + name
	case op == 2:
		w.q.AddRateLimited(name, 1+rng.IntN(4), w.now)
		return "add rate limited " + name
	case op == 3:
		w.q.Forget(name)
		return "forget " + name
	case op == 4 && u != nil:
		// A result: the wave rises; it may fail, as an update-status
		// run or not, and be retried later.
		u.Wave++
		u.Error, u.Resolved = nil, nil
		switch rng.IntN(3) {
		case 0:
			u.Reconciled = w.views[name].Hash
		case 1:
			u.Error = &model.UnitError{Kind: model.ErrHook, Hash: w.views[name].Hash, RetryAt: at.UnixNano(), Attempts: 1, Timer: rng.IntN(2) == 0}
			w.q.AddAfter(name, at)
		}
		w.q.Touch(name)
		return "result " + name
	case op == 5 && u != nil:
		// An operator resolves it; a diverged unit starts its waves over.
		if u.Error == nil {
			u.Error = &model.UnitError{Kind: model.ErrDiverged, Hash: w.views[name].Hash}
		} else {
			u.Resolved = &model.Resolved{}
			if u.Error.Kind == model.ErrDiverged {
				u.Wave = 0
			}
		}
		w.q.Touch(name)
		return "resolve " + name
	case op == 6 && u != nil:
		// Its view is rebuilt: a new hash, maybe another machine.
		v := w.views[name]
		v.Hash, v.Moved = fmt.Sprintf("h%d", rng.IntN(3)), false
		if rng.IntN(4) == 0 {
			v.Machine = machines[rng.IntN(len(machines))]
			u.Machine = v.Machine
		}
		w.views[name] = v
		w.q.Touch(name)
		return "rebuild " + name
	case op == 7 && u != nil:
		v := w.views[name]
		v.Moved = true
		w.views[name] = v
		w.q.Add(name)
		return "moved " + name
	case op == 8:
		// Hand out what the machine may run, as the controller does.
		m := machines[rng.IntN(len(machines))]
		for _, unit := range w.q.Choose(w.st, m, w.now, w.look).Run {
			w.claims[unit] = Entry{Until: w.now.Add(time.Duration(1+rng.IntN(90)) * time.Second),
				Timer: TimerRun(w.st.Units[unit], w.views[unit].Hash)}
		}
		return "hand out to " + m
	case op == 9 && u != nil && !w.q.Has(name):
		w.claims[name] = Entry{Until: w.now.Add(time.Duration(1+rng.IntN(90)) * time.Second), Timer: true}
		return "update-status claim " + name
	case op == 10 || op == 11:
		// A claim ends (report, release, heartbeat): nobody is told.
		for unit := range w.claims {
			delete(w.claims, unit)
			return "claim ends " + unit
		}
	case op == 12:
		w.now = w.now.Add(time.Duration(rng.IntN(40)) * time.Second)
		return "time"
	case op == 13:
		// A machine is lost or back: the controller rebuilds every view,
		// which starts the queue over.
		m := w.st.Machines[machines[rng.IntN(len(machines))]]
		m.Lost = !m.Lost
		items := map[string]time.Time{}
		for unit, at := range w.q.All() {
			items[unit] = at
		}
		w.q.Clear()
		for unit, at := range items {
			w.q.Set(unit, at)
		}
		for unit := range w.claims {
			w.q.Touch(unit)
		}
		return "liveness " + m.Name
	case op == 14 && rng.IntN(4) == 0:
		// An operator change: new waves.
		for _, u := range w.st.Units {
			u.Wave = 0
		}
		w.q.Rewave()
		for unit := range w.claims {
			w.q.Touch(unit)
		}
		return "new waves"
	case op == 15 && u != nil && rng.IntN(3) == 0:
		// The unit is removed; another may come.
		delete(w.st.Units, name)
		delete(w.views, name)
		w.q.Forget(name)
		w.addUnit(rng, fmt.Sprintf("n/%d", rng.IntN(1000)))
		return "remove " + name
	case op == 16:
		w.now = w.now.Add(time.Duration(rng.IntN(5)) * time.Minute)
		return "time jump"
	}
	return "nothing"
}

// TestQueueChooseIsTheFullWalk: on random sequences of queue changes,
// results, resolutions, view rebuilds, hand-outs, claims ending untold,
// lost machines, new waves, removals and time passing, Queue.Choose for
// every machine answers what the walk over every claim and queued unit
// answers.
func TestQueueChooseIsTheFullWalk(t *testing.T) {
	seeds, steps := 300, 400
	if testing.Short() {
		seeds = 60
	}
	var held, ran int
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 16))
		w := newWorld(rng, 3+rng.IntN(30))
		var trail []string
		for step := range steps {
			trail = append(trail, w.step(rng))
			if len(trail) > 8 {
				trail = trail[1:]
			}
			// Asking is lazy work too: some steps ask nobody.
			if rng.IntN(3) == 0 {
				continue
			}
			for _, m := range machines {
				got, want := w.q.Choose(w.st, m, w.now, w.look), w.fullWalk(m)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d step %d machine %s: index %+v, full walk %+v; last steps %v", seed, step, m, got, want, trail)
				}
				if got.Wave >= 0 {
					held++
				}
				ran += len(got.Run)
			}
		}
	}
	if held == 0 || ran == 0 {
		t.Fatalf("the sequences never held a wave (%d) or ran a unit (%d): they test nothing", held, ran)
	}
}
