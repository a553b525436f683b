package model

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"testing"
)

// TestUnitStatsMatchARebuild applies random deploys (scaling, named
// removals, services and a subordinate coming and going), machines
// registering and getting lost, and results (successes, failures, last
// runs, divergence, resolves), and checks after every command that the
// unit counts the index keeps are those a state built from the units
// again (a restore, a clone) computes, and that every unit holding a wave
// or a divergence error is named waving.
func TestUnitStatsMatchARebuild(t *testing.T) {
	// What the runs went through, so that a workload that stops reaching
	// a state shows.
	seen := map[string]int{}
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		s := NewState()
		idx := uint64(0)
		step := func(c *Command) {
			idx++
			// Refusals (a named removal that does not fit) change
			// nothing; the counts must still hold.
			_, _ = s.Apply(idx, c)
			checkStats(t, fmt.Sprintf("seed %d, index %d (%s)", seed, idx, c.Op), s)
			st := s.stats()
			seen["not alive"] += st.nEnded
			seen["unplaced"] += len(st.unplaced)
			seen["placed"] += len(st.load)
			seen["diverged"] += len(s.diverged())
			for _, u := range s.Units {
				if u.Principal != "" {
					seen["subordinate"]++
				}
			}
		}
		for round := 0; round < 60; round++ {
			switch rng.Intn(6) {
			case 0:
				m := fmt.Sprintf("m%d", rng.Intn(3))
				if rng.Intn(2) == 0 {
					step(&Command{Op: OpMachine, Machine: &RegisterMachine{Name: m, Address: "10.0.0.1"}})
				} else {
					step(&Command{Op: OpLiveness, Liveness: &SetLiveness{Lost: map[string]bool{m: rng.Intn(2) == 0}}})
				}
			case 1, 2:
				step(randomDeploy(rng, s))
			default:
				names := s.SortedUnits()
				if len(names) == 0 {
					continue
				}
				u := s.Units[names[rng.Intn(len(names))]]
				r := Result{Unit: u.Name, Hash: fmt.Sprint("h", rng.Intn(3)), Output: fmt.Sprint("o", rng.Intn(2)), Seen: &Seen{Life: u.Life}}
				switch rng.Intn(5) {
				case 0:
					r.Error = "hook failed"
				case 1:
					if u.Error != nil {
						step(&Command{Op: OpResolve, Resolve: &ResolveUnit{Unit: u.Name, NoRetry: rng.Intn(2) == 0}})
						continue
					}
				}
				step(&Command{Op: OpResults, Results: []Result{r}})
			}
		}
	}
	for _, what := range []string{"not alive", "unplaced", "placed", "diverged", "subordinate"} {
		if seen[what] == 0 {
			t.Errorf("no state had a unit %s: the workload does not test those counts", what)
		}
	}
}

// randomDeploy deploys db, web and, at times, a log subordinate on web,
// with random unit counts, naming at times some alive units to remove.
func randomDeploy(rng *rand.Rand, s *State) *Command {
	e := &Environment{APIVersion: APIVersion, Name: "shop", Services: map[string]ServiceSpec{}, Relations: map[string][]string{}}
	for _, svc := range []string{"db", "web"} {
		if rng.Intn(5) > 0 {
			e.Services[svc] = ServiceSpec{Charm: "./" + svc, CharmHash: "h-" + svc, Units: intp(rng.Intn(6))}
		}
	}
	if _, ok := e.Services["web"]; ok && rng.Intn(2) == 0 {
		e.Services["log"] = ServiceSpec{Charm: "./log", CharmHash: "h-log"}
		e.Relations["logging"] = []string{"web:juju-info", "log:host"}
	}
	d := &Deploy{Env: *e, Charms: charms()}
	for _, svc := range []string{"db", "web"} {
		spec, ok := e.Services[svc]
		if !ok || rng.Intn(3) > 0 {
			continue
		}
		var named []string
		for _, u := range s.aliveUnits(svc) {
			if rng.Intn(3) == 0 {
				named = append(named, u.Name)
			}
		}
		d.RemoveUnits = append(d.RemoveUnits, named...)
		n := s.aliveCount(svc) - len(named)
		spec.Units = &n
		e.Services[svc] = spec
	}
	d.Env = *e
	return &Command{Op: OpDeploy, Deploy: d}
}

// checkStats compares s's kept unit counts with those built from a clone.
func checkStats(t *testing.T, at string, s *State) {
	t.Helper()
	kept := s.stats()
	built := s.Clone().stats()
	for what, pair := range map[string][2]map[string]int{
		"alive": {kept.alive, built.alive}, "unplaced": {kept.unplaced, built.unplaced}, "load": {kept.load, built.load},
	} {
		if !maps.Equal(pair[0], pair[1]) {
			t.Fatalf("%s: %s counts %v kept, %v built from the units", at, what, pair[0], pair[1])
		}
	}
	if len(kept.own) != len(built.own) {
		t.Fatalf("%s: units per machine of %d services kept, %d built", at, len(kept.own), len(built.own))
	}
	for svc, on := range built.own {
		if !maps.Equal(kept.own[svc], on) {
			t.Fatalf("%s: units of %s per machine %v kept, %v built", at, svc, kept.own[svc], on)
		}
	}
	if kept.nEnded != built.nEnded || len(kept.ended) != len(built.ended) {
		t.Fatalf("%s: %d units not alive kept (%d services), %d built (%d services)", at, kept.nEnded, len(kept.ended), built.nEnded, len(built.ended))
	}
	for svc, us := range built.ended {
		if got, want := unitNamesOf(kept.ended[svc]), unitNamesOf(us); !slices.Equal(got, want) {
			t.Fatalf("%s: units of %s not alive: %v kept, %v built", at, svc, got, want)
		}
	}
	for svc := range s.Services {
		if got, want := unitNamesOf(s.UnitsOf(svc)), unitNamesOf(s.Clone().UnitsOf(svc)); !slices.Equal(got, want) {
			t.Fatalf("%s: units of %s: %v kept, %v built", at, svc, got, want)
		}
	}
	for name := range built.waving {
		if !kept.waving[name] {
			t.Fatalf("%s: %s holds a wave or a divergence error but is not named waving", at, name)
		}
	}
}

func unitNamesOf(us []*Unit) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.Name
	}
	return out
}
