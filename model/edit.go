package model

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Edits by command (`fixpoint deploy`, `add-unit`, `remove-unit`,
// `remove-service`, `relate`, `unrelate`, `config`): each is a pure change
// of an environment document that the CLI read, applied to a copy and sent
// back whole, stamped with the revision it was read at. An edit that does
// not fit the document is an error naming what is there, and the document
// is left as it was.

// EditCopy returns a copy of env deep enough for an edit to change its
// services, their config and unit counts, and its relations, without
// touching env.
func EditCopy(env *Environment) *Environment {
	out := *env
	out.Services = make(map[string]ServiceSpec, len(env.Services))
	for n, s := range env.Services {
		s.Config = maps.Clone(s.Config)
		if s.Units != nil {
			u := *s.Units
			s.Units = &u
		}
		out.Services[n] = s
	}
	out.Relations = make(map[string][]string, len(env.Relations))
	for n, r := range env.Relations {
		out.Relations[n] = slices.Clone(r)
	}
	// Edits by command replace a secret's declaration or a setting whole.
	out.Secrets = maps.Clone(env.Secrets)
	out.ModelConfig = maps.Clone(env.ModelConfig)
	return &out
}

// unknownService is the error for a service env does not declare.
func unknownService(env *Environment, name string) error {
	return fmt.Errorf("environment %s has no service %q (services: %s)", env.Name, name, listOr(sortedKeys(env.Services)))
}

// EditAddService declares service name as spec; a name already declared is
// refused.
func EditAddService(env *Environment, name string, spec ServiceSpec) error {
	if err := CheckName(KindService, name); err != nil {
		return err
	}
	if _, ok := env.Services[name]; ok {
		return fmt.Errorf("service %s already exists in environment %s (charm %s); deploy it under another name: fixpoint deploy CHARM OTHER-NAME", name, env.Name, env.Services[name].Charm)
	}
	if env.Services == nil {
		env.Services = map[string]ServiceSpec{}
	}
	env.Services[name] = spec
	return nil
}

// ServiceUnits is the unit count the document declares for name (one
// when it says none, as Resolve reads it).
func ServiceUnits(spec ServiceSpec) int {
	if spec.Units == nil {
		return 1
	}
	return *spec.Units
}

// EditAddUnits raises service name's unit count by n. A subordinate's units
// follow its principals and cannot be added.
func EditAddUnits(env *Environment, name string, n int, meta *CharmMeta) error {
	spec, ok := env.Services[name]
	if !ok {
		return unknownService(env, name)
	}
	if n < 1 {
		return fmt.Errorf("add-unit -n %d: the number of units to add must be 1 or more", n)
	}
	if meta != nil && meta.Subordinate {
		return fmt.Errorf("service %s runs subordinate charm %s, whose units follow the principal units it is related to; add units to a principal instead", name, meta.Name)
	}
	units := ServiceUnits(spec) + n
	spec.Units = &units
	env.Services[name] = spec
	return nil
}

// EditRemoveUnits lowers each named unit's service count by one unit per
// name: the document's count is the number left once those exact units
// are gone (Deploy.RemoveUnits names them). alive says whether a unit
// exists and is not dying: one that is not is refused.
func EditRemoveUnits(env *Environment, units []string, alive func(unit string) bool) error {
	seen := map[string]bool{}
	drop := map[string]int{}
	for _, u := range units {
		svc, _, ok := strings.Cut(u, "/")
		if err := CheckUnitName(u); err != nil || !ok {
			return fmt.Errorf("%q is not a unit name; write SERVICE/NUMBER, e.g. %s/0", u, svc)
		}
		if _, ok := env.Services[svc]; !ok {
			return fmt.Errorf("unit %s: %w", u, unknownService(env, svc))
		}
		if seen[u] {
			return fmt.Errorf("unit %s is named twice; name each unit once", u)
		}
		seen[u] = true
		if !alive(u) {
			return fmt.Errorf("service %s has no unit %s, or it is already going; see fixpoint status %s", svc, u, svc)
		}
		drop[svc]++
	}
	for svc, n := range drop {
		spec := env.Services[svc]
		left := max(ServiceUnits(spec)-n, 0)
		spec.Units = &left
		env.Services[svc] = spec
	}
	return nil
}

// EditRemoveServices removes the named services and every relation that
// names one of them.
func EditRemoveServices(env *Environment, names []string) error {
	gone := map[string]bool{}
	for _, n := range names {
		if _, ok := env.Services[n]; !ok {
			return unknownService(env, n)
		}
		gone[n] = true
	}
	for n := range gone {
		delete(env.Services, n)
	}
	for name, ends := range env.Relations {
		for _, e := range ends {
			if s, _, _ := strings.Cut(e, ":"); gone[s] {
				delete(env.Relations, name)
				break
			}
		}
	}
	return nil
}

// EditAddRelation declares the relation ends under a new name (NameRelation)
// and returns the name; a relation already declared between the same
// endpoints, bound as existing lists them, is refused.
func EditAddRelation(env *Environment, ends RelationEnds, existing []BoundRelation) (string, error) {
	for _, r := range existing {
		if r.Ends == ends || r.Ends == (RelationEnds{ends[1], ends[0]}) {
			return "", fmt.Errorf("relation already exists: %q is relation %s", ends.String(), r.Name)
		}
	}
	taken := map[string]bool{}
	for n := range env.Relations {
		taken[n] = true
	}
	name := NameRelation(ends, taken)
	if env.Relations == nil {
		env.Relations = map[string][]string{}
	}
	env.Relations[name] = []string{ends[0], ends[1]}
	return name, nil
}

// EditRemoveRelation removes the relation declared as name.
func EditRemoveRelation(env *Environment, name string) error {
	if _, ok := env.Relations[name]; !ok {
		return fmt.Errorf("environment %s declares no relation %q (relations: %s)", env.Name, name, listOr(sortedKeys(env.Relations)))
	}
	delete(env.Relations, name)
	return nil
}
