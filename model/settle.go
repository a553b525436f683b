package model

import (
	"fmt"
	"sort"
)

// settle runs after every command and brings the derived parts of the
// state in line: placement, subordinate units, leadership, and removal of
// what has finished dying. It is deterministic like the rest of Apply.
// It reports whether it changed anything.
func (s *State) settle(index uint64) bool {
	placed := s.place(index)
	attached := s.attachSubordinates(index)
	removed := s.removeFinished(index)
	elected := s.electLeaders(index)
	return placed || attached || removed || elected
}

// place puts unplaced units on machines: round robin over a service's
// pinned list (the machine need not exist yet), or else the registered
// machine with the fewest units of that service.
func (s *State) place(index uint64) bool {
	var unplaced []string
	for name, u := range s.Units {
		if u.Machine == "" && u.Principal == "" && u.Life == Alive {
			unplaced = append(unplaced, name)
		}
	}
	if len(unplaced) == 0 {
		return false
	}
	sort.Slice(unplaced, func(i, j int) bool { return UnitLess(unplaced[i], unplaced[j]) })
	machines := sortedKeys(s.Machines)
	load := map[string]int{}
	for _, u := range s.Units {
		if u.Machine != "" && u.Life == Alive {
			load[u.Machine]++
		}
	}
	changed := false
	for _, name := range unplaced {
		u := s.Units[name]
		svc := s.Services[u.Service]
		if len(svc.Placement) > 0 {
			u.Machine, u.Index = svc.Placement[u.Number()%len(svc.Placement)], index
			changed = true
			continue
		}
		// The emptiest machine first, then the one with the fewest units
		// of this service: services spread over all machines instead of
		// piling onto the first ones, and a service's units apart.
		best, bestTotal, bestOwn := "", -1, -1
		for _, m := range machines {
			if s.Machines[m].Lost {
				continue
			}
			total, own := load[m], 0
			for _, o := range s.UnitsOf(u.Service) {
				if o.Machine == m {
					own++
				}
			}
			if bestTotal < 0 || total < bestTotal || total == bestTotal && own < bestOwn {
				best, bestTotal, bestOwn = m, total, own
			}
		}
		if best != "" {
			load[best]++
		}
		if best != "" {
			u.Machine, u.Index = best, index
			changed = true
		}
	}
	return changed
}

// attachSubordinates keeps one unit of each subordinate service per
// principal unit it is related to over a container-scoped relation.
func (s *State) attachSubordinates(index uint64) bool {
	changed := false
	for _, sname := range sortedKeys(s.Services) {
		sub := s.Services[sname]
		if !sub.Subordinate {
			continue
		}
		want := map[string]bool{}
		if sub.Life == Alive {
			for _, r := range s.RelationsOf(sname) {
				if r.Scope != Container || r.Life != Alive || len(r.Endpoints) != 2 {
					continue
				}
				remote, _ := r.Remote(sname)
				if ps := s.Services[remote.Service]; ps == nil || ps.Subordinate {
					continue
				}
				for _, p := range s.UnitsOf(remote.Service) {
					if p.Life == Alive && p.Machine != "" {
						want[p.Name] = true
					}
				}
			}
		}
		have := map[string]bool{}
		for _, u := range s.UnitsOf(sname) {
			if u.Life == Alive && !want[u.Principal] {
				s.killUnit(index, u)
				changed = true
			}
			if u.Life == Alive {
				have[u.Principal] = true
			}
		}
		for _, p := range sortedUnitKeys(want) {
			if have[p] {
				continue
			}
			name := fmt.Sprintf("%s/%d", sname, sub.NextUnit)
			sub.NextUnit++
			s.Units[name] = &Unit{Name: name, Service: sname, Machine: s.Units[p].Machine, Principal: p, Life: Alive,
				Created: index, Index: index, Status: Status{State: "waiting", Message: "installing"}}
			s.reindex()
			changed = true
		}
	}
	return changed
}

func sortedUnitKeys(m map[string]bool) []string {
	keys := sortedKeys(m)
	sort.Slice(keys, func(i, j int) bool { return UnitLess(keys[i], keys[j]) })
	return keys
}

// removeFinished deletes what has finished dying: dying units with nothing
// to reconcile, dying relations no unit still holds, dying services with no
// units left, and charms nothing uses.
func (s *State) removeFinished(index uint64) bool {
	changed := false
	for _, name := range s.SortedUnits() {
		u := s.Units[name]
		if u.Life == Dying && (u.Seen == nil || u.Machine == "") {
			s.removeUnit(u)
			changed = true
		}
	}
	for _, id := range s.SortedRelations() {
		r := s.Relations[id]
		if r.Life != Dying {
			continue
		}
		held := false
		for _, u := range s.Units {
			if u.Seen != nil && u.Seen.Relations[id] != nil {
				held = true
				break
			}
		}
		if held {
			continue
		}
		delete(s.Relations, id)
		s.reindex()
		changed = true
		for _, u := range s.Units {
			delete(u.Settings, id)
		}
	}
	for _, name := range sortedKeys(s.Services) {
		svc := s.Services[name]
		if svc.Life == Dying && len(s.UnitsOf(name)) == 0 && len(s.RelationsOf(name)) == 0 {
			if svc.NextUnit > 0 {
				s.UnitNumbers[name] = svc.NextUnit
			}
			delete(s.Services, name)
			changed = true
		}
	}
	used := map[string]bool{}
	for _, svc := range s.Services {
		used[svc.Charm] = true
	}
	for h := range s.Charms {
		if !used[h] {
			delete(s.Charms, h)
		}
	}
	return changed
}

// electLeaders keeps one leader per service among alive units on
// registered machines whose agent is not lost; the lowest-numbered such
// unit wins, and a leader is only replaced when it stops qualifying.
func (s *State) electLeaders(index uint64) bool {
	changed := false
	for _, name := range sortedKeys(s.Services) {
		svc := s.Services[name]
		if cur, ok := s.Units[svc.Leader]; ok && s.canLead(cur) {
			continue
		}
		next := ""
		for _, u := range s.UnitsOf(name) {
			if s.canLead(u) {
				next = u.Name
				break
			}
		}
		if next == "" {
			if cur, ok := s.Units[svc.Leader]; ok && cur.Life == Alive {
				continue // keep a lost leader rather than none at all
			}
		}
		if next != svc.Leader {
			svc.Leader, svc.LeaderRev, svc.Index = next, index, index
			changed = true
		}
	}
	return changed
}

func (s *State) canLead(u *Unit) bool {
	if u.Life != Alive || u.Machine == "" {
		return false
	}
	m, ok := s.Machines[u.Machine]
	return ok && !m.Lost
}
