package model

import (
	"cmp"
	"maps"
	"slices"
	"sort"
)

// unitStats is the part of the derived index (index.go) that counts units
// by life and placement, so that a deploy's plan, limits, placement and
// divergence rules look at the services and units it changes instead of
// every unit of the environment. Like the rest of the index it is built
// from the units (lookups) and kept up to date by the few places that
// change a unit's life or machine, add it or drop it: addUnits, dropUnit,
// and changeUnit (killUnit, place). It is never replicated: a decoded,
// restored or cloned state builds it again from its units.
type unitStats struct {
	// alive counts the alive units of each service.
	alive map[string]int
	// unplaced counts the alive principal units of each service on no
	// machine: those place has to place.
	unplaced map[string]int
	// load counts the alive units on each machine.
	load map[string]int
	// own counts the units of each service on each machine, whatever
	// their life: what spreads a service's units apart.
	own map[string]map[string]int
	// ended holds the units of each service that are not alive, ordered
	// by number; nEnded is how many there are in all. Its slices are
	// never changed in place, like the index's units.
	ended  map[string][]*Unit
	nEnded int
	// waving names every unit that may hold wave state (Wave, WaveOutputs,
	// Churn) or a divergence error: those a result applied to since the
	// last operator change, or that held them when the index was built.
	// It may name more; newWaves starts their waves over and keeps only
	// those left diverged.
	waving map[string]bool
}

func newUnitStats() unitStats {
	return unitStats{alive: map[string]int{}, unplaced: map[string]int{}, load: map[string]int{},
		own: map[string]map[string]int{}, ended: map[string][]*Unit{}, waving: map[string]bool{}}
}

// count adds u, as it is now, to the counts; uncount takes it out. A
// change of a unit's life or machine is an uncount before it and a count
// after it.
func (st *unitStats) count(u *Unit) { st.add(u, 1) }

func (st *unitStats) uncount(u *Unit) { st.add(u, -1) }

func (st *unitStats) add(u *Unit, n int) {
	if u.Machine != "" {
		on := st.own[u.Service]
		if on == nil {
			on = map[string]int{}
			st.own[u.Service] = on
		}
		if bump(on, u.Machine, n); len(on) == 0 {
			delete(st.own, u.Service)
		}
	}
	if u.Life != Alive {
		st.nEnded += n
		us := st.ended[u.Service]
		if n > 0 {
			i, _ := slices.BinarySearchFunc(us, u, byNumber)
			st.ended[u.Service] = slices.Insert(slices.Clip(us), i, u)
			return
		}
		if j := unitIndex(us, u); j >= 0 {
			us = slices.Delete(slices.Clone(us), j, j+1)
		}
		if len(us) == 0 {
			delete(st.ended, u.Service)
		} else {
			st.ended[u.Service] = us
		}
		return
	}
	bump(st.alive, u.Service, n)
	if u.Machine != "" {
		bump(st.load, u.Machine, n)
	} else if u.Principal == "" {
		bump(st.unplaced, u.Service, n)
	}
}

// bump adds n to m[k], keeping no zero entry.
func bump(m map[string]int, k string, n int) {
	if v := m[k] + n; v != 0 {
		m[k] = v
	} else {
		delete(m, k)
	}
}

// byNumber orders units by number.
func byNumber(a, b *Unit) int { return cmp.Compare(a.Number(), b.Number()) }

// stats returns the unit counts, building the index if it is not yet.
func (s *State) stats() *unitStats { return &s.lookups().stats }

// aliveCount is how many units of svc are alive.
func (s *State) aliveCount(svc string) int { return s.stats().alive[svc] }

// endedUnits returns the units of svc that are not alive, by number.
func (s *State) endedUnits(svc string) []*Unit { return s.stats().ended[svc] }

// machineLoad counts the alive units placed on each machine; the map is
// the caller's.
func (s *State) machineLoad() map[string]int { return maps.Clone(s.stats().load) }

// unplacedUnits returns the alive principal units of svc on no machine,
// by number. They are the newest as a rule (a unit gets a machine in the
// command that adds it, unless none is registered): the walk starts from
// the newest and stops once it has them all.
func (s *State) unplacedUnits(svc string) []*Unit {
	n := s.stats().unplaced[svc]
	units := s.UnitsOf(svc)
	var out []*Unit
	for i := len(units) - 1; i >= 0 && len(out) < n; i-- {
		if u := units[i]; u.Machine == "" && u.Principal == "" && u.Life == Alive {
			out = append(out, u)
		}
	}
	slices.Reverse(out)
	return out
}

// aliveUnits returns the alive units of svc, oldest (lowest number) first.
func (s *State) aliveUnits(svc string) []*Unit {
	units := s.UnitsOf(svc)
	out := make([]*Unit, 0, s.aliveCount(svc))
	for _, u := range units {
		if u.Life == Alive {
			out = append(out, u)
		}
	}
	return out
}

// newestAlive returns the n newest alive units of svc that skip does not
// name, oldest first: those a scale down removes.
func (s *State) newestAlive(svc string, n int, skip map[string]bool) []*Unit {
	units := s.UnitsOf(svc)
	var out []*Unit
	for i := len(units) - 1; i >= 0 && len(out) < n; i-- {
		if u := units[i]; u.Life == Alive && !skip[u.Name] {
			out = append(out, u)
		}
	}
	slices.Reverse(out)
	return out
}

// wavingUnit says unit may hold wave state or a divergence error from now
// on.
func (s *State) wavingUnit(u *Unit) { s.stats().waving[u.Name] = true }

// holdsWave reports whether u holds wave state or a divergence error: the
// units waving names when the index is built.
func (u *Unit) holdsWave() bool {
	return u.Wave != 0 || u.WaveOutputs != nil || u.Churn != nil || (u.Error != nil && u.Error.Kind == ErrDiverged)
}

// diverged names the units declared diverging, whose error an operator
// change clears, in order. Only units the index says are waving can be.
func (s *State) diverged() []string {
	var out []string
	for name := range s.stats().waving {
		if u := s.Units[name]; u != nil && u.Error != nil && u.Error.Kind == ErrDiverged {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// newWaves starts every unit's wave over, as an operator change does: the
// run count, the outputs seen per universe and the churn go. A universe
// the operator's change brings back may rightly be answered otherwise than
// before it (a legacy charm's hooks follow what happened, not only what
// is).
//
// Only the units the index says are waving can hold a wave; those left
// holding a divergence error stay named.
func (s *State) newWaves() {
	waving := s.stats().waving
	for name := range waving {
		u := s.Units[name]
		if u != nil {
			u.Wave, u.WaveOutputs, u.Churn = 0, nil, nil
		}
		if u == nil || !u.holdsWave() {
			delete(waving, name)
		}
	}
}
