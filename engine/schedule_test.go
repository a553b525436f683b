package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// Charm logic as pure Go functions, after the demo: db grants every client
// that asked and lists them; web asks, and connects once it is listed;
// both publish their peers, and the db leader names itself primary. The
// chain services (generated environments) pass a digest downstream.
func kvDB(u *charmapi.Universe) *charmapi.Result {
	r := charmapi.NewResult()
	for _, rel := range u.Relations {
		switch rel.Name {
		case "db":
			var asked []string
			for unit, s := range rel.Units {
				if s["database"] != "" {
					asked = append(asked, unit)
				}
			}
			sort.Slice(asked, func(i, j int) bool { return model.UnitLess(asked[i], asked[j]) })
			r.SetLocal(rel.Ident, map[string]string{"host": u.Address, "allowed-units": strings.Join(asked, " "), "password": "pw-" + rel.RemoteService})
		case "cluster":
			r.SetLocal(rel.Ident, map[string]string{"address": u.Address, "peers": strings.Join(slices.Sorted(maps.Keys(rel.Units)), " ")})
			if u.Leader {
				r.SetApp(rel.Ident, map[string]string{"primary": u.Unit})
			}
		}
	}
	return r.Active("")
}

func kvWeb(u *charmapi.Universe) *charmapi.Result {
	r := charmapi.NewResult()
	state := "waiting"
	for _, rel := range u.Relations {
		switch rel.Name {
		case "db":
			r.SetLocal(rel.Ident, map[string]string{"database": "shop"})
			for _, unit := range slices.Sorted(maps.Keys(rel.Units)) {
				if strings.Contains(" "+rel.Units[unit]["allowed-units"]+" ", " "+u.Unit+" ") {
					state = "connected to " + unit
					break
				}
			}
		case "cluster":
			r.SetLocal(rel.Ident, map[string]string{"peers": strings.Join(slices.Sorted(maps.Keys(rel.Units)), " ")})
		}
	}
	r.State = map[string]string{"conn": state}
	return r.Active(state)
}

// chain publishes a digest of what it sees upstream ("in") and of who
// its peers are, on "out" and to its peers: a pure function whose fixed
// point is unique (it reads its peers' names, not their digests, which
// would make a loop).
func chain(u *charmapi.Universe) *charmapi.Result {
	r := charmapi.NewResult()
	var seen []string
	for _, rel := range u.Relations {
		for _, unit := range slices.Sorted(maps.Keys(rel.Units)) {
			switch rel.Name {
			case "in":
				seen = append(seen, unit+"="+rel.Units[unit]["digest"])
			case "peer":
				seen = append(seen, unit)
			}
		}
	}
	sort.Strings(seen)
	d := digest(seen)[:8]
	for _, rel := range u.Relations {
		if rel.Name == "out" || rel.Name == "peer" {
			r.SetLocal(rel.Ident, map[string]string{"digest": d})
		}
	}
	return r
}

var hooks = map[string]func(*charmapi.Universe) *charmapi.Result{"db": kvDB, "web": kvWeb, "chain": chain}

// generated deploys shop plus a chain of n services of k units each,
// every link a relation, on two machines.
func generated(t *testing.T, s *memStore, n, k int) {
	t.Helper()
	charms := map[string]*model.Charm{
		"h-db":    {Hash: "h-db", Meta: model.CharmMeta{Name: "db", Provides: map[string]model.Endpoint{"db": {Interface: "kv"}}, Peers: map[string]model.Endpoint{"cluster": {Interface: "c"}}}},
		"h-web":   {Hash: "h-web", Meta: model.CharmMeta{Name: "web", Requires: map[string]model.Endpoint{"db": {Interface: "kv"}}, Peers: map[string]model.Endpoint{"cluster": {Interface: "w"}}}},
		"h-chain": {Hash: "h-chain", Meta: model.CharmMeta{Name: "chain", Requires: map[string]model.Endpoint{"in": {Interface: "link"}}, Provides: map[string]model.Endpoint{"out": {Interface: "link"}}, Peers: map[string]model.Endpoint{"peer": {Interface: "p"}}}},
	}
	env := model.Environment{APIVersion: model.APIVersion, Name: "gen",
		Services:  map[string]model.ServiceSpec{"db": {CharmHash: "h-db", Units: intp(3)}, "web": {CharmHash: "h-web", Units: intp(4)}},
		Relations: map[string][]string{"web-db": {"web:db", "db:db"}}}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("chain%d", i)
		env.Services[name] = model.ServiceSpec{CharmHash: "h-chain", Units: intp(k)}
		if i > 0 {
			env.Relations[fmt.Sprintf("link%d", i)] = []string{fmt.Sprintf("chain%d:out", i-1), name + ":in"}
		}
	}
	ctx := context.Background()
	for _, m := range []string{"m", "n"} {
		if _, err := s.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: m, Address: "10.0.0." + m}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		t.Fatal(err)
	}
}

func serviceOf(unit string) string { return model.ServiceOf(unit) }

func run(u *charmapi.Universe) []byte {
	// Services are named after their charm, perhaps with a number: db0.
	h := hooks[strings.TrimRight(serviceOf(u.Unit), "0123456789")]
	if h == nil {
		h = chain
	}
	out, _ := json.Marshal(h(u))
	return out
}

// driveRandom drives a controller to the fixed point under a random
// schedule: each round runs a random subset of the claimed units, in a
// random order, reporting in random batches — some results computed from
// universes that went stale meanwhile — and gives the rest back.
func driveRandom(t *testing.T, s *memStore, rng *rand.Rand) (rounds, runs int) {
	t.Helper()
	ctl := NewController(s, Options{Window: 1})
	ctx := context.Background()
	for rounds = 0; rounds < 500; rounds++ {
		var work []wire.Work
		// A machine may find nothing while another's unit holds the
		// wave and turns out unchanged; a second pass sees past it, as
		// a woken agent's next poll would.
		for pass := 0; pass < 2 && len(work) == 0; pass++ {
			for _, m := range []string{"m", "n"} {
				w, err := ctl.WaitForWork(ctx, m, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				work = append(work, w...)
			}
		}
		if len(work) == 0 {
			return rounds, runs
		}
		rng.Shuffle(len(work), func(i, j int) { work[i], work[j] = work[j], work[i] })
		chosen := work[:1+rng.IntN(len(work))]
		byMachine := map[string][]wire.Report{}
		for _, w := range chosen {
			runs++
			byMachine[w.Universe.Machine] = append(byMachine[w.Universe.Machine], wire.Report{Unit: w.Unit, Hash: w.Hash, Output: run(w.Universe)})
		}
		for m, reps := range byMachine {
			for len(reps) > 0 {
				n := 1 + rng.IntN(len(reps))
				if _, err := ctl.Accept(ctx, m, reps[:n]); err != nil {
					t.Fatal(err)
				}
				reps = reps[n:]
			}
		}
		// What was claimed but not run goes back, as when an agent
		// restarts.
		ctl.Release("m")
		ctl.Release("n")
	}
	t.Fatalf("no fixed point after %d rounds", rounds)
	return
}

// settings is every bag in the state, canonically encoded: what the fixed
// point is made of.
func settings(s *memStore) string {
	out := map[string]any{}
	_ = s.View(func(st *model.State) error {
		for name, u := range st.Units {
			for id, b := range u.Settings.All() {
				out[fmt.Sprintf("%s/%d", name, id)] = b.Map()
			}
			out[name+"/state"] = u.State
		}
		for id, r := range st.Relations {
			for svc, b := range r.App {
				out[fmt.Sprintf("rel%d/%s", id, svc)] = b.Map()
			}
		}
		return nil
	})
	b, _ := json.Marshal(out)
	return string(b)
}

func TestEveryScheduleReachesTheSameFixedPoint(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 10
	}
	want := ""
	for seed := 0; seed < seeds; seed++ {
		s := newMemStore()
		generated(t, s, 4, 3)
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		rounds, runs := driveRandom(t, s, rng)
		got := settings(s)
		if want == "" {
			want = got
			t.Logf("seed 0: fixed point after %d rounds, %d runs", rounds, runs)
		} else if got != want {
			t.Fatalf("seed %d reached another fixed point:\n%s\nwant:\n%s", seed, got, want)
		}
		// One more round after convergence writes nothing.
		idx := s.Index()
		ctl := NewController(s, Options{})
		for _, m := range []string{"m", "n"} {
			if w, _ := ctl.WaitForWork(context.Background(), m, 0, 0); len(w) != 0 {
				t.Fatalf("seed %d: %d units stale at the fixed point", seed, len(w))
			}
		}
		st, _ := ctl.Status()
		if !st.Converged || s.Index() != idx {
			t.Fatalf("seed %d: not converged (%s) or the state moved", seed, st.Summary)
		}
	}
}

// crashAt is where the agent dies during one unit's first run.
type crashAt int

const (
	noCrash crashAt = iota
	beforeHook
	afterHookBeforePost
	afterPost
)

// drive runs the environment to its fixed point with one agent, which dies
// once at the given step of victim's first run. It returns the events each
// unit's accepted runs saw, in order.
func drive(t *testing.T, s *memStore, victim string, at crashAt) map[string][]string {
	t.Helper()
	ctl := NewController(s, Options{Window: 1})
	ctx := context.Background()
	accepted := map[string][]string{}
	crashed := at == noCrash
	for round := 0; round < 200; round++ {
		work, err := ctl.WaitForWork(ctx, "m", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(work) == 0 {
			return accepted
		}
		var reps []wire.Report
		var evs = map[string][]string{}
		for _, w := range work {
			if !crashed && w.Unit == victim && at == beforeHook {
				crashed = true
				ctl.Release("m") // the agent died before running anything
				reps = nil
				break
			}
			out := run(w.Universe)
			for _, e := range w.Universe.Events {
				evs[w.Unit] = append(evs[w.Unit], e.String())
			}
			reps = append(reps, wire.Report{Unit: w.Unit, Hash: w.Hash, Output: out})
			if !crashed && w.Unit == victim && at == afterHookBeforePost {
				crashed = true
				reps = nil // the hook ran; the agent died before posting
				ctl.Release("m")
				break
			}
		}
		if len(reps) == 0 {
			continue
		}
		if _, err := ctl.Accept(ctx, "m", reps); err != nil {
			t.Fatal(err)
		}
		for _, r := range reps {
			accepted[r.Unit] = append(accepted[r.Unit], evs[r.Unit]...)
		}
		for _, r := range reps {
			if !crashed && r.Unit == victim && at == afterPost {
				crashed = true
				ctl.Release("m") // the agent died right after posting
			}
		}
	}
	t.Fatal("no fixed point")
	return nil
}

func TestAgentCrashAtEveryStepLosesAndRepeatsNoEvent(t *testing.T) {
	base := newMemStore()
	shop(t, base, 2, 2)
	wantEvents := drive(t, base, "", noCrash)
	want := settings(base)
	for _, victim := range []string{"db/0", "web/1"} {
		for _, at := range []crashAt{beforeHook, afterHookBeforePost, afterPost} {
			s := newMemStore()
			shop(t, s, 2, 2)
			got := drive(t, s, victim, at)
			if settings(s) != want {
				t.Errorf("crash of %s at step %d: another fixed point", victim, at)
			}
			if !reflect.DeepEqual(got, wantEvents) {
				t.Errorf("crash of %s at step %d: events differ:\n%v\nwant:\n%v", victim, at, got, wantEvents)
			}
		}
	}
	if len(wantEvents["web/0"]) == 0 || wantEvents["web/0"][0] != "install" {
		t.Fatalf("events not derived: %v", wantEvents)
	}
}
