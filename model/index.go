package model

import (
	"slices"
	"sort"
)

// index holds lookups derived from the state: a unit's universe and every
// settle step work per service, and scanning every unit for each would make
// the engine's work grow with the environment instead of with what changed.
// It is built once (lazily, after a decode) and then kept up to date by
// addUnits, dropUnit, changeUnit, addRelation, dropRelation, putSecret and
// dropSecret. Its slices are never changed in place, so a caller ranging
// over one while the state changes keeps a consistent view; the secret
// index's sets are, and are read only through secretCandidates, which
// copies them.
type index struct {
	// units maps a service to its units, ordered by number.
	units map[string][]*Unit
	// relations maps a service to the relations it takes part in, by id.
	relations map[string][]*Relation
	// secrets indexes the Juju secrets by who they show to
	// (secrets_index.go).
	secrets secretIndex
	// stats counts the units by life and placement (unitstats.go).
	stats unitStats
}

func (s *State) lookups() *index {
	if s.idx != nil {
		return s.idx
	}
	ix := &index{units: map[string][]*Unit{}, relations: map[string][]*Relation{}, stats: newUnitStats()}
	for _, u := range s.Units {
		ix.units[u.Service] = append(ix.units[u.Service], u)
		ix.stats.count(u)
		if u.holdsWave() {
			ix.stats.waving[u.Name] = true
		}
	}
	for _, us := range ix.units {
		sort.Slice(us, func(i, j int) bool { return us[i].Number() < us[j].Number() })
	}
	for _, id := range s.SortedRelations() {
		r := s.Relations[id]
		for _, svc := range r.services() {
			ix.relations[svc] = append(ix.relations[svc], r)
		}
	}
	ix.secrets = buildSecretIndex(s.Secrets)
	s.idx = ix
	return ix
}

// addUnits adds new units of one service to the state.
func (s *applying) addUnits(svc string, us []*Unit) {
	if len(us) == 0 {
		return
	}
	for _, u := range us {
		s.Units[u.Name] = u
		// A unit is created with its storage, as Juju's AddUnit is.
		s.ensureStorage(u)
		if u.Machine != "" {
			s.note(u.Name, EventCreated, false, "unit added, on machine %s", u.Machine)
		} else {
			s.note(u.Name, EventCreated, false, "unit added")
		}
	}
	if s.idx == nil {
		return
	}
	old := s.idx.units[svc]
	merged := append(slices.Clip(old), us...)
	if len(old) > 0 && byNumber(old[len(old)-1], us[0]) > 0 || !slices.IsSortedFunc(us, byNumber) {
		// New units are numbered after the others, as a rule: only
		// units added out of order need a sort.
		sort.SliceStable(merged, func(i, j int) bool { return merged[i].Number() < merged[j].Number() })
	}
	s.idx.units[svc] = merged
	for _, u := range us {
		s.idx.stats.count(u)
	}
}

// dropUnit deletes a unit from the state.
func (s *State) dropUnit(u *Unit) {
	delete(s.Units, u.Name)
	if s.idx == nil {
		return
	}
	us := s.idx.units[u.Service]
	if i := unitIndex(us, u); i >= 0 {
		s.idx.units[u.Service] = slices.Delete(slices.Clone(us), i, i+1)
	}
	s.idx.stats.uncount(u)
	delete(s.idx.stats.waving, u.Name)
}

// changeUnit runs change, which sets u's life or machine, and keeps the
// index's counts of them.
func (s *State) changeUnit(u *Unit, change func()) {
	if s.idx == nil {
		change()
		return
	}
	s.idx.stats.uncount(u)
	change()
	s.idx.stats.count(u)
}

// unitIndex is the position of u in us, ordered by number, or -1.
func unitIndex(us []*Unit, u *Unit) int {
	i, _ := slices.BinarySearchFunc(us, u, byNumber)
	// Numbers are unique within a service, but every unit of a malformed
	// name numbers -1: look for u itself from there.
	if j := slices.Index(us[i:], u); j >= 0 {
		return i + j
	}
	return slices.Index(us[:i], u)
}

// addRelation adds a new relation; its id is the highest yet.
func (s *State) addRelation(r *Relation) {
	s.Relations[r.ID] = r
	if s.idx == nil {
		return
	}
	for _, svc := range r.services() {
		s.idx.relations[svc] = append(slices.Clip(s.idx.relations[svc]), r)
	}
}

// dropRelation deletes a relation from the state.
func (s *State) dropRelation(r *Relation) {
	delete(s.Relations, r.ID)
	if s.idx == nil {
		return
	}
	for _, svc := range r.services() {
		rs := s.idx.relations[svc]
		if i := slices.Index(rs, r); i >= 0 {
			s.idx.relations[svc] = slices.Delete(slices.Clone(rs), i, i+1)
		}
	}
}

// services returns the services at the relation's endpoints, each once.
func (r *Relation) services() []string {
	var out []string
	for _, e := range r.Endpoints {
		if !slices.Contains(out, e.Service) {
			out = append(out, e.Service)
		}
	}
	return out
}
