package model

// A departed unit's settings stay readable in the -departed hook that
// tells another unit it left (Juju keeps them until every unit has left
// its scope). Units are removed from the state as soon as their teardown
// ran, often before the units on the other side ran their departed hooks,
// and possibly while those units' agents are down; so removal keeps the
// unit's last settings on each relation whose units still list it in their
// Seen, and they are dropped once none does.

// keepDeparted records u's last settings in every relation where a unit
// still has u in its Seen; called as u is removed.
func (s *State) keepDeparted(u *Unit) {
	for id, bag := range u.Settings.All() {
		r := s.Relations[id]
		if r == nil || bag == nil || !s.stillSeen(r, u.Name) {
			continue
		}
		r.Departed = withEntry(r.Departed, u.Name, bag)
	}
}

// stillSeen reports whether a unit of r's services lists unit as a member
// of r in what it last reconciled.
func (s *State) stillSeen(r *Relation, unit string) bool {
	for _, svc := range r.services() {
		for _, o := range s.UnitsOf(svc) {
			if o.Name == unit || o.Seen == nil {
				continue
			}
			if sr := o.Seen.Relations.Get(r.ID); sr != nil && sr.Members.Has(unit) {
				return true
			}
		}
	}
	return false
}

// pruneDeparted drops the departed settings of relations in seen (the
// Seen a unit just replaced) that no unit lists any more. It costs nothing
// while no relation keeps any.
func (s *State) pruneDeparted(seen *Seen) {
	if seen == nil {
		return
	}
	for id := range seen.Relations.All() {
		r := s.Relations[id]
		if r == nil || len(r.Departed) == 0 {
			continue
		}
		for name := range r.Departed {
			if !s.stillSeen(r, name) {
				r.Departed = withoutEntry(r.Departed, name)
			}
		}
		if len(r.Departed) == 0 {
			r.Departed = nil
		}
	}
}

// DepartedSettings returns the last settings of unit in relation id as the
// state still has them: the unit's own while it exists, else those kept
// when it was removed; ok is false when neither is there.
func (s *State) DepartedSettings(id int, unit string) (map[string]string, bool) {
	if u, ok := s.Units[unit]; ok {
		return u.Settings.Get(id).Map(), true
	}
	if r := s.Relations[id]; r != nil {
		if b, ok := r.Departed[unit]; ok {
			return b.Map(), true
		}
	}
	return nil, false
}

// LeavingSettings returns u's own settings in each relation it last
// reconciled (its Seen) that listed (the relations of the universe being
// built) no longer holds, by the relation's name as u's service knows it
// ("endpoint:id"): a dying unit's, or one whose relation is going. Juju
// answers a unit's relation-get of its own settings from them until its
// -relation-broken hook has run. addr fills in private-address as in the
// unit's listed relations. It is nil when there are none.
func (s *State) LeavingSettings(u *Unit, listed SeenRelations, addr string) map[string]map[string]string {
	if u.Seen == nil {
		return nil
	}
	var out map[string]map[string]string
	for id := range u.Seen.Relations.All() {
		if listed.Has(id) {
			continue
		}
		r := s.Relations[id]
		if r == nil {
			continue
		}
		data := u.Settings.Get(id).Map()
		if data == nil {
			data = map[string]string{}
		}
		if _, ok := data["private-address"]; !ok && addr != "" {
			data["private-address"] = addr
		}
		if out == nil {
			out = map[string]map[string]string{}
		}
		out[r.Ident(u.Service)] = data
	}
	return out
}
