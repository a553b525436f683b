package model

import (
	"container/heap"
	"fmt"
	"slices"
)

// scope is what one settle looks at. An operator change, a machine that
// came or changed and a change of liveness may move anything, so they
// settle everything; a hook result can only finish what its own service
// started (a dying unit, a dying relation), so it settles that service and
// the cost of the hot path does not grow with the environment.
type scope struct {
	all bool
	// services whose units, leadership and life are settled.
	services map[string]bool
	// relations that are dying and may have lost their last holder.
	relations map[int]bool
}

// everything is the scope of an operator change.
func everything() *scope { return &scope{all: true} }

// addService puts svc, and the dying relations it takes part in, in scope.
func (sc *scope) addService(s *State, svc string) {
	if sc.all {
		return
	}
	if sc.services == nil {
		sc.services, sc.relations = map[string]bool{}, map[int]bool{}
	}
	sc.services[svc] = true
	for _, r := range s.RelationsOf(svc) {
		if r.Life == Dying {
			sc.relations[r.ID] = true
		}
	}
}

// empty reports whether there is nothing to settle.
func (sc *scope) empty() bool { return !sc.all && len(sc.services) == 0 }

// unsettled reports whether unit u has something settle may finish: it is
// dying, or a relation of its service is.
func (s *State) unsettled(u *Unit) bool {
	if u.Life != Alive {
		return true
	}
	for _, r := range s.RelationsOf(u.Service) {
		if r.Life == Dying {
			return true
		}
	}
	return false
}

// serviceNames returns the services in scope, sorted, so that every node
// settles in the same order.
func (s *State) serviceNames(sc *scope) []string {
	if sc.all {
		return sortedKeys(s.Services)
	}
	var out []string
	for _, name := range sortedKeys(sc.services) {
		if _, ok := s.Services[name]; ok {
			out = append(out, name)
		}
	}
	return out
}

// settle runs after a command and brings the derived parts of the state in
// line within sc: placement, subordinate units, leadership, and removal of
// what has finished dying. It is deterministic like the rest of Apply.
// It reports whether it changed anything.
func (s *applying) settle(index uint64, sc *scope) bool {
	if sc.empty() {
		return false
	}
	placed := s.place(index, sc)
	attached := s.attachSubordinates(index, sc)
	removed := s.removeFinished(sc)
	elected := s.electLeaders(index, sc)
	return placed || attached || removed || elected
}

// place puts unplaced units on machines: round robin over a service's
// pinned list (the machine need not exist yet), or else the registered
// machine the environment's placement admits with the fewest units in
// all, then the fewest of that service, then the first by name: services
// spread over those machines instead of piling onto the first ones, and a
// service's units apart. A placed unit stays where it is, even on a
// machine the rule no longer admits: placement is judged once, when a
// unit is placed, as Kubernetes' scheduler and Juju's constraints do.
func (s *State) place(index uint64, sc *scope) bool {
	changed := false
	var load map[string]int
	for _, name := range s.serviceNames(sc) {
		unplaced := s.unplacedUnits(name)
		if len(unplaced) == 0 {
			continue
		}
		if load == nil {
			// Counted before anything is placed: pinned units do not
			// weigh on the machines the others are spread over.
			load = s.machineLoad()
		}
		svc := s.Services[name]
		if len(svc.Placement) > 0 {
			for _, u := range unplaced {
				s.changeUnit(u, func() { u.Machine, u.Index = svc.Placement[u.Number()%len(svc.Placement)], index })
			}
			changed = true
			continue
		}
		// Read before anything of this service is placed.
		own := s.stats().own[name]
		h := &machineHeap{}
		for m, mach := range s.Machines {
			// The heap orders by name last, so the map's order does
			// not reach a decision.
			if !mach.Lost && s.Placement.Admits(mach) {
				h.slots = append(h.slots, slot{machine: m, total: load[m], own: own[m]})
			}
		}
		if len(h.slots) == 0 {
			continue
		}
		heap.Init(h)
		for _, u := range unplaced {
			best := &h.slots[0]
			s.changeUnit(u, func() { u.Machine, u.Index = best.machine, index })
			load[best.machine]++
			best.total++
			best.own++
			heap.Fix(h, 0)
		}
		changed = true
	}
	return changed
}

// slot is a machine as placement weighs it for one service.
type slot struct {
	machine    string
	total, own int
}

// machineHeap keeps the machine placement picks next on top.
type machineHeap struct{ slots []slot }

func (h *machineHeap) Len() int { return len(h.slots) }
func (h *machineHeap) Less(i, j int) bool {
	a, b := h.slots[i], h.slots[j]
	if a.total != b.total {
		return a.total < b.total
	}
	if a.own != b.own {
		return a.own < b.own
	}
	return a.machine < b.machine
}
func (h *machineHeap) Swap(i, j int) { h.slots[i], h.slots[j] = h.slots[j], h.slots[i] }
func (h *machineHeap) Push(x any)    { h.slots = append(h.slots, x.(slot)) }
func (h *machineHeap) Pop() any {
	last := h.slots[len(h.slots)-1]
	h.slots = h.slots[:len(h.slots)-1]
	return last
}

// attachSubordinates keeps one unit of each subordinate service per
// principal unit it is related to over a container-scoped relation.
func (s *applying) attachSubordinates(index uint64, sc *scope) bool {
	changed := false
	for _, sname := range s.subordinatesIn(sc) {
		sub := s.Services[sname]
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
		var added []*Unit
		for _, p := range sortedUnitKeys(want) {
			if have[p] {
				continue
			}
			name := fmt.Sprintf("%s/%d", sname, sub.NextUnit)
			sub.NextUnit++
			added = append(added, &Unit{Name: name, Service: sname, Machine: s.Units[p].Machine, Principal: p, Life: Alive,
				Created: index, Index: index, Status: Status{State: "waiting", Message: "installing"}})
		}
		if len(added) > 0 {
			s.addUnits(sname, added)
			changed = true
		}
	}
	return changed
}

// subordinatesIn returns, sorted, the subordinate services in scope and
// those attached over a container relation to a service in scope.
func (s *State) subordinatesIn(sc *scope) []string {
	subs := map[string]bool{}
	for _, name := range s.serviceNames(sc) {
		if s.Services[name].Subordinate {
			subs[name] = true
		}
		if sc.all {
			continue
		}
		for _, r := range s.RelationsOf(name) {
			if r.Scope != Container {
				continue
			}
			for _, other := range r.services() {
				if svc := s.Services[other]; svc != nil && svc.Subordinate {
					subs[other] = true
				}
			}
		}
	}
	return sortedKeys(subs)
}

func sortedUnitKeys(m map[string]bool) []string {
	keys := sortedKeys(m)
	slices.SortFunc(keys, CompareUnits)
	return keys
}

// removeFinished deletes what has finished dying within sc: dying units
// with nothing to reconcile, dying relations no unit still holds, dying
// services with no units left, and charms nothing uses.
func (s *applying) removeFinished(sc *scope) bool {
	changed := false
	for _, name := range s.serviceNames(sc) {
		for _, u := range s.endedUnits(name) {
			if u.Life == Dying && (u.Seen == nil || u.Machine == "") {
				s.removeUnit(u)
				changed = true
			}
		}
	}
	for _, r := range s.dyingRelationsIn(sc) {
		if s.held(r) {
			continue
		}
		s.dropRelation(r)
		changed = true
		for _, svc := range r.services() {
			// Its services may now be free to go.
			sc.addService(s.State, svc)
			for _, u := range s.UnitsOf(svc) {
				u.Settings = u.Settings.Without(r.ID)
			}
		}
	}
	removedService := false
	for _, name := range s.serviceNames(sc) {
		svc := s.Services[name]
		if svc.Life == Dying && len(s.UnitsOf(name)) == 0 && len(s.RelationsOf(name)) == 0 {
			if svc.NextUnit > 0 {
				s.UnitNumbers[name] = svc.NextUnit
			}
			delete(s.Services, name)
			changed, removedService = true, true
		}
	}
	if sc.all || removedService {
		used := map[string]bool{}
		for _, svc := range s.Services {
			used[svc.Charm] = true
		}
		for h := range s.Charms {
			if !used[h] {
				delete(s.Charms, h)
			}
		}
	}
	return changed
}

// dyingRelationsIn returns the dying relations in scope, by id.
func (s *State) dyingRelationsIn(sc *scope) []*Relation {
	var out []*Relation
	if sc.all {
		for _, id := range s.SortedRelations() {
			if r := s.Relations[id]; r.Life == Dying {
				out = append(out, r)
			}
		}
		return out
	}
	for _, id := range sortedKeys(sc.relations) {
		if r, ok := s.Relations[id]; ok && r.Life == Dying {
			out = append(out, r)
		}
	}
	return out
}

// held reports whether a unit still holds relation r: its last reconcile
// saw it, so its departure has not run yet. Only units of r's services can
// have seen it.
func (s *State) held(r *Relation) bool {
	for _, svc := range r.services() {
		for _, u := range s.UnitsOf(svc) {
			if u.Seen != nil && u.Seen.Relations.Has(r.ID) {
				return true
			}
		}
	}
	return false
}

// electLeaders keeps one leader per service in sc among alive units on
// registered machines whose agent is not lost; the lowest-numbered such
// unit wins, and a leader is only replaced when it stops qualifying.
func (s *applying) electLeaders(index uint64, sc *scope) bool {
	changed := false
	for _, name := range s.serviceNames(sc) {
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
			s.noteLeader(name, svc.Leader, next)
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
