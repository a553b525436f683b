package model

import "sort"

// index holds lookups derived from the state, rebuilt when units or
// relations come or go: a unit's universe is built from its service's
// units and relations, and scanning every unit for each would make the
// engine's work grow with the environment instead of with what changed.
type index struct {
	units     map[string][]*Unit
	relations map[string][]*Relation
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
		for _, e := range r.Endpoints {
			ix.relations[e.Service] = append(ix.relations[e.Service], r)
		}
	}
	s.idx = ix
	return ix
}

// reindex drops the lookups after units or relations were added or
// removed.
func (s *State) reindex() { s.idx = nil }
