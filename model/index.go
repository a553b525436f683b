package model

import (
	"slices"
	"sort"
)

// index holds lookups derived from the state: a unit's universe and every
// settle step work per service, and scanning every unit for each would make
// the engine's work grow with the environment instead of with what changed.
// It is built once (lazily, after a decode) and then kept up to date by
// addUnits, dropUnit, addRelation, dropRelation, putSecret and
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
}

func (s *State) lookups() *index {
	if s.idx != nil {
		return s.idx
	}
	ix := &index{units: map[string][]*Unit{}, relations: map[string][]*Relation{}}
	for _, u := range s.Units {
		ix.units[u.Service] = append(ix.units[u.Service], u)
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
	merged := append(slices.Clip(s.idx.units[svc]), us...)
	sort.SliceStable(merged, func(i, j int) bool { return merged[i].Number() < merged[j].Number() })
	s.idx.units[svc] = merged
}

// dropUnit deletes a unit from the state.
func (s *State) dropUnit(u *Unit) {
	delete(s.Units, u.Name)
	if s.idx == nil {
		return
	}
	us := s.idx.units[u.Service]
	if i := slices.Index(us, u); i >= 0 {
		s.idx.units[u.Service] = slices.Delete(slices.Clone(us), i, i+1)
	}
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
