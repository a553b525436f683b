package model

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"
)

// bigState deploys pairs web-i/db-i (units each, related, db with peers)
// on machines m0..m(machines-1).
func bigState(t testing.TB, pairs, units, machines int) *State {
	t.Helper()
	s := NewState()
	idx := uint64(1)
	for m := 0; m < machines; m++ {
		if _, err := s.Apply(idx, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: fmt.Sprintf("m%d", m), Address: fmt.Sprintf("10.0.0.%d", m+1)}}); err != nil {
			t.Fatal(err)
		}
		idx++
	}
	e := &Environment{APIVersion: APIVersion, Name: "big", Services: map[string]ServiceSpec{}, Relations: map[string][]string{}}
	for i := 0; i < pairs; i++ {
		e.Services[fmt.Sprintf("web-%d", i)] = ServiceSpec{Charm: "./web", CharmHash: "h-web", Units: intp(units)}
		e.Services[fmt.Sprintf("db-%d", i)] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Units: intp(units)}
		e.Relations[fmt.Sprintf("r%d", i)] = []string{fmt.Sprintf("web-%d:db", i), fmt.Sprintf("db-%d:db", i)}
	}
	if _, err := s.Apply(idx, deployCmd(e)); err != nil {
		t.Fatal(err)
	}
	s.Index = idx
	return s
}

// applyTo applies c at the next index.
func applyTo(t *testing.T, s *State, c *Command) {
	t.Helper()
	if _, err := s.Apply(s.Index+1, c); err != nil {
		t.Fatal(err)
	}
}

// A dying unit's last reconcile removes it, and nothing else.
func TestADyingUnitsLastResultRemovesIt(t *testing.T) {
	s := bigState(t, 10, 5, 3)
	(&applying{State: s}).killUnit(s.Index, s.Units["db-0/4"])
	applyTo(t, s, &Command{Op: OpResults, Results: []Result{{Unit: "db-0/4", Hash: "h2", Seen: &Seen{Life: Dying}}}})
	if _, ok := s.Units["db-0/4"]; ok {
		t.Fatal("db-0/4 not removed after its last reconcile")
	}
	if len(s.Units) != 10*2*5-1 {
		t.Fatalf("%d units left; want every other one", len(s.Units))
	}
}

func TestSettleOfADyingRelationFinishesItsServices(t *testing.T) {
	s := bigState(t, 3, 2, 2)
	rel := s.RelationsOf("web-1")[0]
	for _, u := range append(s.UnitsOf("web-1"), s.UnitsOf("db-1")...) {
		u.Seen = &Seen{Life: Alive, Relations: NewSeenRelations(map[int]*SeenRelation{rel.ID: {Endpoint: "db"}})}
	}
	// Remove web-1 and its relation from the environment.
	e := &Environment{APIVersion: APIVersion, Name: "big", Services: map[string]ServiceSpec{}, Relations: map[string][]string{}}
	for _, i := range []int{0, 2} {
		e.Services[fmt.Sprintf("web-%d", i)] = ServiceSpec{Charm: "./web", CharmHash: "h-web", Units: intp(2)}
		e.Relations[fmt.Sprintf("r%d", i)] = []string{fmt.Sprintf("web-%d:db", i), fmt.Sprintf("db-%d:db", i)}
	}
	for i := 0; i < 3; i++ {
		e.Services[fmt.Sprintf("db-%d", i)] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Units: intp(2)}
	}
	if _, err := s.Apply(s.Index+1, deployCmd(e)); err != nil {
		t.Fatal(err)
	}
	s.Index++
	if s.Relations[rel.ID] == nil || s.Relations[rel.ID].Life != Dying {
		t.Fatal("relation not dying after its removal was applied")
	}
	// The web units depart and are removed; the relation is held by db-1
	// until its units have seen it go.
	for _, u := range []string{"web-1/0", "web-1/1"} {
		applyTo(t, s, &Command{Op: OpResults, Results: []Result{{Unit: u, Hash: "x", Seen: &Seen{Life: Dying}}}})
	}
	if _, ok := s.Services["web-1"]; !ok {
		t.Fatal("web-1 removed while its relation is still held by db-1")
	}
	for _, u := range []string{"db-1/0", "db-1/1"} {
		applyTo(t, s, &Command{Op: OpResults, Results: []Result{{Unit: u, Hash: "y", Seen: &Seen{Life: Alive}}}})
	}
	if _, ok := s.Relations[rel.ID]; ok {
		t.Fatal("relation kept after no unit holds it")
	}
	if _, ok := s.Services["web-1"]; ok {
		t.Fatal("web-1 kept after its units and relations are gone")
	}
	if got := len(s.RelationsOf("db-1")); got != 1 { // its peer relation
		t.Fatalf("db-1 still lists %d relations, want its peer relation only", got)
	}
}

// linearPlacement is the placement rule as a scan over every machine for
// every unit: slow, obviously right, and the oracle for the heap.
// linearAdmits is the environment's rule written out: the machine is
// named, or has every label asked for with its value.
func linearAdmits(p *EnvPlacement, m *Machine) bool {
	if p == nil {
		return true
	}
	if len(p.Machines) > 0 {
		for _, name := range p.Machines {
			if name == m.Name {
				return true
			}
		}
		return false
	}
	matched := 0
	for k, v := range m.Labels {
		if want, ok := p.Labels[k]; ok && want == v {
			matched++
		}
	}
	return matched == len(p.Labels)
}

func linearPlacement(s *State) map[string]string {
	var unplaced []string
	for name, u := range s.Units {
		if u.Machine == "" && u.Principal == "" && u.Life == Alive {
			unplaced = append(unplaced, name)
		}
	}
	sort.Slice(unplaced, func(i, j int) bool { return UnitLess(unplaced[i], unplaced[j]) })
	machines := sortedKeys(s.Machines)
	load := map[string]int{}
	on := map[string]string{}
	for name, u := range s.Units {
		on[name] = u.Machine
		if u.Machine != "" && u.Life == Alive {
			load[u.Machine]++
		}
	}
	for _, name := range unplaced {
		svc := s.Services[s.Units[name].Service]
		if len(svc.Placement) > 0 {
			on[name] = svc.Placement[s.Units[name].Number()%len(svc.Placement)]
			continue
		}
		best, bestTotal, bestOwn := "", -1, -1
		for _, m := range machines {
			if s.Machines[m].Lost || !linearAdmits(s.Placement, s.Machines[m]) {
				continue
			}
			own := 0
			for other, at := range on {
				if at == m && s.Units[other].Service == svc.Name {
					own++
				}
			}
			if bestTotal < 0 || load[m] < bestTotal || load[m] == bestTotal && own < bestOwn {
				best, bestTotal, bestOwn = m, load[m], own
			}
		}
		if best != "" {
			load[best]++
			on[name] = best
		}
	}
	return on
}

// TestPlacementMatchesTheLinearScan: the heap places every unit where a
// plain scan of the machines in name order would, under no rule, a label
// rule or a machine list.
func TestPlacementMatchesTheLinearScan(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 500; round++ {
		s := NewState()
		for m := 0; m < 1+rng.Intn(6); m++ {
			s.Machines[fmt.Sprintf("m%d", m)] = &Machine{Name: fmt.Sprintf("m%d", m), Address: "10.0.0.1", Lost: rng.Intn(5) == 0,
				Labels: map[string]string{"zone": []string{"a", "b"}[rng.Intn(2)], "rack": fmt.Sprint(rng.Intn(3))}}
		}
		switch rng.Intn(4) {
		case 1:
			s.Placement = &EnvPlacement{Labels: map[string]string{"zone": "a"}}
		case 2:
			s.Placement = &EnvPlacement{Labels: map[string]string{"zone": "b", "rack": "1"}}
		case 3:
			s.Placement = &EnvPlacement{Machines: []string{"m1", "m3"}}
		}
		for i := 0; i < 1+rng.Intn(5); i++ {
			name := fmt.Sprintf("svc%d", i)
			svc := &Service{Name: name, Life: Alive}
			if rng.Intn(4) == 0 {
				svc.Placement = []string{"m0", "m9"}
			}
			s.Services[name] = svc
			for n := 0; n < rng.Intn(12); n++ {
				u := &Unit{Name: fmt.Sprintf("%s/%d", name, n), Service: name, Life: Alive}
				switch rng.Intn(4) {
				case 0:
					u.Machine = fmt.Sprintf("m%d", rng.Intn(6))
				case 1:
					u.Life = Dying
				}
				s.Units[u.Name] = u
			}
		}
		want := linearPlacement(s)
		s.place(1, everything())
		for name, u := range s.Units {
			if u.Machine != want[name] {
				t.Fatalf("round %d: %s placed on %q, the linear scan says %q", round, name, u.Machine, want[name])
			}
		}
	}
}

// BenchmarkSettle measures Apply, settle included, at two sizes of state:
// a command that changes nothing, an alive unit's result and a dying
// unit's last result each cost the same at ten times the units, since
// settle looks only at what the command touched (compare the sizes' ns/op).
func BenchmarkSettle(b *testing.B) {
	for _, pairs := range []int{100, 1000} {
		b.Run(fmt.Sprintf("noop/units=%d", pairs*10), func(b *testing.B) {
			s := bigState(b, pairs, 5, 3)
			c := &Command{Op: OpLiveness, Liveness: &SetLiveness{Lost: map[string]bool{}}}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.Apply(s.Index+1, c); err != nil {
					b.Fatal(err)
				}
				s.Index++
			}
		})
		b.Run(fmt.Sprintf("result/units=%d", pairs*10), func(b *testing.B) {
			s := bigState(b, pairs, 5, 3)
			rel := s.RelationsOf("web-0")[0].ID
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c := &Command{Op: OpResults, Results: []Result{{Unit: "web-0/1", Hash: fmt.Sprint("h", i),
					Settings: map[int]map[string]string{rel: {"k": fmt.Sprint(i)}}, Seen: &Seen{Life: Alive}}}}
				if _, err := s.Apply(s.Index+1, c); err != nil {
					b.Fatal(err)
				}
				s.Index++
			}
		})
		b.Run(fmt.Sprintf("dying/units=%d", pairs*10), func(b *testing.B) {
			s := bigState(b, pairs, 5, 3)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				// A unit of another pair each time; a fresh state once
				// every db unit is gone.
				svc := fmt.Sprintf("db-%d", i%pairs)
				if len(s.UnitsOf(svc)) == 0 {
					s = bigState(b, pairs, 5, 3)
				}
				u := s.UnitsOf(svc)[len(s.UnitsOf(svc))-1]
				(&applying{State: s}).killUnit(s.Index, u)
				c := &Command{Op: OpResults, Results: []Result{{Unit: u.Name, Hash: "h", Seen: &Seen{Life: Dying}}}}
				b.StartTimer()
				if _, err := s.Apply(s.Index+1, c); err != nil {
					b.Fatal(err)
				}
				s.Index++
			}
		})
	}
}
