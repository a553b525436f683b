package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// store is the replicated state without Raft, for the controller.
type store struct {
	mu      sync.RWMutex
	st      *model.State
	changed chan struct{}
	// journal is st's, as the FSM keeps it (Changes); started at the
	// first Apply.
	journal *model.Journal
}

func (s *store) View(fn func(*model.State) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return fn(s.st)
}

func (s *store) Apply(_ context.Context, c *model.Command) (*model.Response, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var dc model.Command
	if err := json.Unmarshal(data, &dc); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.journal == nil {
		s.journal = model.NewJournal(s.st.Index)
	}
	resp, err := s.st.Apply(s.st.Index+1, &dc)
	if err == nil {
		s.journal.Record(resp.Touched(""))
	}
	close(s.changed)
	s.changed = make(chan struct{})
	return resp, err
}

func (s *store) WaitIndex(ctx context.Context, after uint64) (uint64, bool, error) {
	for {
		s.mu.RLock()
		idx, ch := s.st.Index, s.changed
		s.mu.RUnlock()
		if idx > after || ctx.Err() != nil {
			return idx, false, nil
		}
		select {
		case <-ctx.Done():
		case <-ch:
		}
	}
}

// Changes is st's journal; called inside View.
func (s *store) Changes(since uint64) ([]model.Touched, bool) { return s.journal.ChangesSince(since) }

func (s *store) Index() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.st.Index
}

// randomEnv deploys n services of 1-3 units over machines m0..m2. Service
// i may provide "down" to any later service, which requires it as "up";
// some services have peers. Relations only go down the list, so the hooks
// below have one fixed point.
func randomEnv(t *testing.T, s *store, rng *rand.Rand) {
	t.Helper()
	env := model.Environment{APIVersion: model.APIVersion, Name: "prop", Services: map[string]model.ServiceSpec{}, Relations: map[string][]string{}}
	charms := map[string]*model.Charm{}
	n := 2 + rng.IntN(4)
	for i := range n {
		name := fmt.Sprintf("s%d", i)
		meta := model.CharmMeta{Name: name,
			Provides: map[string]model.Endpoint{"down": {Interface: "link"}},
			Requires: map[string]model.Endpoint{"up": {Interface: "link"}}}
		if rng.IntN(2) == 0 {
			meta.Peers = map[string]model.Endpoint{"peer": {Interface: name + "-peer"}}
		}
		charms["h-"+name] = &model.Charm{Hash: "h-" + name, Meta: meta}
		units := 1 + rng.IntN(3)
		var placement []string
		for range units {
			placement = append(placement, fmt.Sprintf("m%d", rng.IntN(3)))
		}
		env.Services[name] = model.ServiceSpec{CharmHash: "h-" + name, Units: &units, Placement: placement}
		for j := range i {
			if rng.IntN(3) == 0 {
				env.Relations[fmt.Sprintf("r%d-%d", j, i)] = []string{fmt.Sprintf("s%d:down", j), name + ":up"}
			}
		}
	}
	ctx := context.Background()
	for i := range 3 {
		m := &model.RegisterMachine{Name: fmt.Sprintf("m%d", i), Address: fmt.Sprintf("10.0.0.%d", i+1)}
		if _, err := s.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: m}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		t.Fatal(err)
	}
}

// propHook publishes on every relation a digest of what it sees upstream
// and of its peers' names. Some units fail their first two tries of a
// universe, so that retries and their backoff are exercised.
func propHook(u *charmapi.Universe) ([]byte, string) {
	var seen []string
	for _, rel := range u.Relations {
		for _, m := range rel.Members() {
			switch rel.Name {
			case "up":
				seen = append(seen, m+"="+rel.Units[m]["d"])
			case "peer":
				seen = append(seen, m)
			}
		}
	}
	sort.Strings(seen)
	sum := sha256.Sum256(fmt.Append(nil, u.Unit, seen))
	d := hex.EncodeToString(sum[:4])
	if sum[5]%5 == 0 && u.Attempt <= 2 {
		return nil, "flaky: attempt " + fmt.Sprint(u.Attempt)
	}
	res := charmapi.NewResult()
	for _, rel := range u.Relations {
		res.SetLocal(rel.Ident, map[string]string{"d": d})
	}
	out, _ := json.Marshal(res.Active(d))
	return out, ""
}

// TestControllerAndSimulatorDecideAlike drives the controller and the
// simulator's decisions through the same random environments and
// schedules: at every step, the units the controller hands out over all
// machines are the ones Runnable lists, with the same hash, attempt and
// events. Reports land in random batches, some runs stay in flight for
// several rounds, and the clock jumps so that retries come due.
func TestControllerAndSimulatorDecideAlike(t *testing.T) {
	envs := 30
	if testing.Short() {
		envs = 8
	}
	for seed := range envs {
		rng := rand.New(rand.NewPCG(uint64(seed), 13))
		s := &store{st: model.NewState(), changed: make(chan struct{})}
		randomEnv(t, s, rng)
		now := time.Unix(1_000_000, 0)
		ctl := engine.NewController(s, engine.Options{Window: 1, Now: func() time.Time { return now }})
		ctx := context.Background()
		type flight struct {
			w       wire.Work
			machine string
		}
		var inFlight []flight
		running := func(unit string) bool {
			return slices.ContainsFunc(inFlight, func(f flight) bool { return f.w.Unit == unit })
		}
		converged := false
		handouts, retries := 0, 0
		for round := 0; round < 400 && !converged; round++ {
			type handout struct {
				uni  charmapi.Universe
				hash string
			}
			var want []string
			wantOf := map[string]handout{}
			_ = s.View(func(st *model.State) error {
				want = Runnable(st, running, now)
				for _, u := range want {
					uni, hash, _ := Handout(st, u)
					wantOf[u] = handout{uni, hash}
				}
				return nil
			})
			var got []string
			for m := range 3 {
				machine := fmt.Sprintf("m%d", m)
				work, err := ctl.WaitForWork(ctx, machine, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range work {
					got = append(got, w.Unit)
					handouts++
					if w.Universe.Attempt > 1 {
						retries++
					}
					h := wantOf[w.Unit]
					if w.Hash != h.hash || w.Universe.Attempt != h.uni.Attempt || fmt.Sprint(w.Universe.Events) != fmt.Sprint(h.uni.Events) {
						t.Fatalf("seed %d round %d: %s handed out with hash %s attempt %d events %v; the simulator gives hash %s attempt %d events %v",
							seed, round, w.Unit, w.Hash, w.Universe.Attempt, w.Universe.Events, h.hash, h.uni.Attempt, h.uni.Events)
					}
					inFlight = append(inFlight, flight{w, machine})
				}
			}
			charmapi.SortUnits(got)
			if !slices.Equal(got, want) {
				_ = s.View(func(st *model.State) error {
					for _, u := range want {
						if !slices.Contains(got, u) {
							uu := st.Units[u]
							uni, _ := engine.Build(st, u)
							ex, _ := ctl.Explain(u)
							t.Logf("%s: wave %d reconciled %s error %+v hash %s; explain %+v", u, uu.Wave, uu.Reconciled, uu.Error, engine.Hash(uni), ex)
						}
					}
					return nil
				})
				t.Fatalf("seed %d round %d: the controller hands out %v, the simulator would run %v", seed, round, got, want)
			}
			if len(inFlight) == 0 {
				// Nothing runs and nothing may: the fixed point, unless a
				// retry waits for its time.
				var retry bool
				_ = s.View(func(st *model.State) error {
					for _, u := range st.Units {
						retry = retry || (u.Error != nil && u.Error.Kind == model.ErrHook)
					}
					return nil
				})
				if !retry {
					converged = true
					break
				}
				now = now.Add(time.Duration(1+rng.IntN(600)) * time.Second)
				continue
			}
			// Report a random part of what is in flight, per machine, in
			// random batches; the rest stays in flight.
			rng.Shuffle(len(inFlight), func(i, j int) { inFlight[i], inFlight[j] = inFlight[j], inFlight[i] })
			k := 1 + rng.IntN(len(inFlight))
			done := inFlight[:k]
			inFlight = slices.Clone(inFlight[k:])
			for len(done) > 0 {
				machine := done[0].machine
				var reps []wire.Report
				var rest []flight
				for _, f := range done {
					if f.machine == machine && (len(reps) == 0 || rng.IntN(2) == 0) {
						out, herr := propHook(f.w.Universe)
						reps = append(reps, wire.Report{Unit: f.w.Unit, Hash: f.w.Hash, Output: out, Error: herr})
					} else {
						rest = append(rest, f)
					}
				}
				if _, err := ctl.Accept(ctx, machine, reps); err != nil {
					t.Fatal(err)
				}
				done = rest
			}
			if rng.IntN(4) == 0 {
				now = now.Add(time.Duration(rng.IntN(120)) * time.Second)
			}
		}
		if !converged {
			t.Fatalf("seed %d: no fixed point", seed)
		}
		t.Logf("seed %d: %d handouts, %d of them retries", seed, handouts, retries)
		st, err := ctl.Status()
		if err != nil || !st.Converged {
			t.Fatalf("seed %d: the simulator's fixed point is not the controller's: %v %+v", seed, err, st)
		}
	}
}
