package model

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Change is one step from the current state towards a desired one. Plan
// lists them for the operator; Apply carries out exactly the same list.
type Change struct {
	Kind    string   `json:"kind"`
	Service string   `json:"service,omitempty"`
	Key     string   `json:"key,omitempty"`
	Old     string   `json:"old,omitempty"`
	New     string   `json:"new,omitempty"`
	Units   []string `json:"units,omitempty"`
	// Note says why units go that the operator did not remove by name:
	// subordinates whose principal or relation goes.
	Note string `json:"note,omitempty"`
}

// Change kinds.
const (
	AddService     = "add-service"
	RemoveService  = "remove-service"
	UpgradeCharm   = "upgrade-charm"
	SetConfig      = "config"
	AddUnits       = "add-units"
	RemoveUnits    = "remove-units"
	SetPlacement   = "placement"
	SetStorage     = "storage"
	AddRelation    = "add-relation"
	RemoveRelation = "remove-relation"
	// SetResource changes one resource of a service (Key); Old and New
	// are digests, "" for none.
	SetResource = "resource"
)

func (c Change) String() string {
	switch c.Kind {
	case AddService:
		return fmt.Sprintf("+ service %s (charm %s)", c.Service, ShortHash(c.New))
	case RemoveService:
		return fmt.Sprintf("- service %s (units go dying: %s)", c.Service, UnitList(c.Units))
	case UpgradeCharm:
		return fmt.Sprintf("~ service %s charm %s -> %s", c.Service, ShortHash(c.Old), ShortHash(c.New))
	case SetConfig:
		return fmt.Sprintf("~ service %s config %s: %s -> %s", c.Service, c.Key, c.Old, c.New)
	case AddUnits:
		return fmt.Sprintf("+ units %s", UnitList(c.Units))
	case RemoveUnits:
		if c.Note != "" {
			return fmt.Sprintf("- units %s (go dying: %s)", UnitList(c.Units), c.Note)
		}
		return fmt.Sprintf("- units %s (go dying)", UnitList(c.Units))
	case SetPlacement:
		return fmt.Sprintf("~ service %s placement %s -> %s", c.Service, c.Old, c.New)
	case SetResource:
		return fmt.Sprintf("~ service %s resource %s %s -> %s", c.Service, c.Key, ShortHash(c.Old), ShortHash(c.New))
	case SetStorage:
		return fmt.Sprintf("~ service %s storage %s count %s -> %s", c.Service, c.Key, c.Old, c.New)
	case SetTrust:
		return fmt.Sprintf("~ service %s trust %s -> %s", c.Service, c.Old, c.New)
	case SetExpose:
		return fmt.Sprintf("~ service %s exposed %s -> %s", c.Service, c.Old, c.New)
	case SetCredential:
		return fmt.Sprintf("~ credential %s -> %s", c.Old, c.New)
	case SetEnvPlacement:
		return fmt.Sprintf("~ placement %s -> %s", c.Old, c.New)
	case SetModelConfig:
		return modelConfigString(c)
	case AddRelation:
		return fmt.Sprintf("+ relation %s (%s)", c.Key, c.New)
	case RemoveRelation:
		return fmt.Sprintf("- relation %s (%s)", c.Key, c.Old)
	}
	if s, ok := secretChangeString(c); ok {
		return s
	}
	return c.Kind
}

// Removes reports whether the change takes something away: a service, a
// relation, units or a user secret. `apply` asks before applying such a
// plan.
func (c Change) Removes() bool {
	return c.Kind == RemoveService || c.Kind == RemoveUnits || c.Kind == RemoveRelation || c.Kind == RemoveSecret
}

// ShortHash abbreviates a content hash for people: its first 12 characters,
// or "(none)".
func ShortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "(none)"
	}
	return h
}

// Plan lists the changes that take s to d, in a fixed order: the units d
// names to remove (Desired.RemoveUnits) go first, then the newest. It indexes
// the units by service (State.UnitsOf) and counts them (unitStats), so
// that it costs what the services it changes hold, not every unit: a plan
// runs on every apply, an edit by command's too.
func Plan(s *State, d *Desired) []Change {
	var out []Change
	gone := map[string]bool{} // units this plan makes dying
	removing := removeBySvc(d.RemoveUnits)
	for _, name := range sortedKeys(d.Services) {
		ds := d.Services[name]
		cur, ok := s.Services[name]
		if !ok || cur.Life != Alive {
			out = append(out, Change{Kind: AddService, Service: name, New: ds.Charm})
			out = append(out, resourceChanges(name, nil, ds.Resources)...)
			next := s.UnitNumbers[name]
			if ok {
				next = cur.NextUnit
			}
			if units := unitNames(name, next, ds.Units); len(units) > 0 {
				out = append(out, Change{Kind: AddUnits, Service: name, Units: units})
			}
			continue
		}
		if cur.Charm != ds.Charm {
			out = append(out, Change{Kind: UpgradeCharm, Service: name, Old: cur.Charm, New: ds.Charm})
		}
		out = append(out, resourceChanges(name, cur.Resources, ds.Resources)...)
		for _, k := range unionKeys(cur.Config, ds.Config) {
			o, n := showValue(cur.Config, k), showValue(ds.Config, k)
			if o != n {
				if ds.Secret[k] || secretOption(s, cur.Charm, k) {
					// Shown to whoever plans: the old value is not theirs.
					o, n = showSecret(cur.Config, k), showSecret(ds.Config, k)
				}
				out = append(out, Change{Kind: SetConfig, Service: name, Key: k, Old: o, New: n})
			}
		}
		out = append(out, storageChanges(name, cur.Storage, ds.Storage)...)
		if strings.Join(cur.Placement, ",") != strings.Join(ds.Placement, ",") {
			out = append(out, Change{Kind: SetPlacement, Service: name, Old: "[" + strings.Join(cur.Placement, ",") + "]", New: "[" + strings.Join(ds.Placement, ",") + "]"})
		}
		if ds.Subordinate {
			continue
		}
		named := s.namedRemovals(name, removing[name])
		if len(named) > 0 {
			for _, n := range named {
				gone[n] = true
			}
			out = append(out, Change{Kind: RemoveUnits, Service: name, Units: named})
		}
		alive := s.aliveCount(name) - len(named)
		switch {
		case alive < ds.Units:
			out = append(out, Change{Kind: AddUnits, Service: name, Units: unitNames(name, cur.NextUnit, ds.Units-alive)})
		case alive > ds.Units:
			// The newest units go first, as in Juju's remove-unit by scale.
			var names []string
			for _, u := range s.newestAlive(name, alive-ds.Units, removing[name]) {
				names = append(names, u.Name)
				gone[u.Name] = true
			}
			out = append(out, Change{Kind: RemoveUnits, Service: name, Units: names})
		}
	}
	for _, name := range sortedKeys(s.Services) {
		cur := s.Services[name]
		if _, ok := d.Services[name]; ok || cur.Life != Alive {
			continue
		}
		var units []string
		for _, u := range s.aliveUnits(name) {
			units = append(units, u.Name)
			gone[u.Name] = true
		}
		out = append(out, Change{Kind: RemoveService, Service: name, Units: units})
	}
	out = append(out, orphanedSubordinates(s, d, gone)...)
	existing := map[RelationKey]*Relation{}
	for _, r := range s.Relations {
		if r.Life == Alive {
			existing[r.Key] = r
		}
	}
	for _, key := range sortedKeys(d.Relations) {
		if _, ok := existing[key]; !ok {
			out = append(out, Change{Kind: AddRelation, Key: string(key), New: relLabel(d.Relations[key].Name)})
		}
	}
	for _, key := range sortedKeys(existing) {
		if _, ok := d.Relations[key]; !ok {
			r := existing[key]
			out = append(out, Change{Kind: RemoveRelation, Key: string(key), Old: fmt.Sprintf("id %d", r.ID)})
		}
	}
	out = append(out, userSecretChanges(s, d)...)
	out = append(out, modelConfigChanges(s, d)...)
	out = append(out, credentialChanges(s, d)...)
	return append(out, envPlacementChanges(s, d)...)
}

// CheckChanges refuses changes that Resolve cannot see are wrong because
// they depend on what is deployed: a charm upgrade that would turn a
// principal service into a subordinate one or back (its units would have
// to be replaced, not upgraded; Juju refuses it too). Plan's callers run it
// before showing or applying a plan.
func CheckChanges(s *State, d *Desired, changes []Change) error {
	var ps Problems
	for _, c := range changes {
		if c.Kind != UpgradeCharm {
			continue
		}
		cur, next := s.Services[c.Service], d.Services[c.Service]
		if cur == nil || next == nil || cur.Subordinate == next.Subordinate {
			continue
		}
		was, is := "a principal", "subordinate"
		if cur.Subordinate {
			was, is = "a subordinate", "a principal"
		}
		ps.add([]string{"services", c.Service, "charm"}, "service %s runs %s charm and the new charm %s is %s; a service cannot change between principal and subordinate: deploy the new charm as another service, then remove %s",
			c.Service, was, next.CharmName, is, c.Service)
	}
	if len(ps) > 0 {
		return ps
	}
	return nil
}

// orphanedSubordinates lists, per subordinate service that stays, the
// units that go dying because the principal unit they are attached to
// goes, or no container-scoped relation of the desired environment ties
// them to its service any more. settle would kill them anyway; listing
// them shows the operator every unit a change takes away.
func orphanedSubordinates(s *State, d *Desired, gone map[string]bool) []Change {
	var out []Change
	for _, name := range sortedKeys(d.Services) {
		cur, ok := s.Services[name]
		if !d.Services[name].Subordinate || !ok || cur.Life != Alive {
			continue
		}
		principals := map[string]bool{}
		for _, r := range d.Relations {
			if r.Scope != Container || len(r.Endpoints) != 2 {
				continue
			}
			for i, e := range r.Endpoints {
				other := r.Endpoints[1-i].Service
				if ps := d.Services[other]; e.Service == name && ps != nil && !ps.Subordinate {
					principals[other] = true
				}
			}
		}
		var units, of []string
		for _, u := range s.aliveUnits(name) {
			p := s.Units[u.Principal]
			if p == nil || p.Life != Alive || gone[p.Name] || !principals[p.Service] {
				units = append(units, u.Name)
				if u.Principal != "" && !slices.Contains(of, u.Principal) {
					of = append(of, u.Principal)
				}
			}
		}
		if len(units) == 0 {
			continue
		}
		note := "not attached to a principal"
		if len(of) > 0 {
			sort.Slice(of, func(i, j int) bool { return UnitLess(of[i], of[j]) })
			note = "subordinate to " + strings.Join(of, ", ")
		}
		out = append(out, Change{Kind: RemoveUnits, Service: name, Units: units, Note: note})
	}
	return out
}

func relLabel(name string) string {
	if name == "" {
		return "peer"
	}
	return name
}

func unitNames(svc string, next, n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("%s/%d", svc, next+i))
	}
	return out
}

func unionKeys(a, b map[string]any) []string {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return sortedKeys(m)
}

// showSecret is showValue of a secret option: redacted.
func showSecret(m map[string]any, k string) string {
	v, ok := m[k]
	if !ok {
		return "(unset)"
	}
	return RedactAny(v)
}

// secretOption reports whether option k of charm (a hash in s) is of type
// secret.
func secretOption(s *State, charm, k string) bool {
	ch := s.Charms[charm]
	return ch != nil && SecretOption(ch.Meta.Options[k])
}

func showValue(m map[string]any, k string) string {
	v, ok := m[k]
	if !ok {
		return "(unset)"
	}
	b, _ := json.Marshal(v)
	return string(b)
}
