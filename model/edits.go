package model

import (
	"errors"
	"fmt"
	"sort"
)

// ErrEnvMoved is the refusal of a deploy planned against a revision of
// the environment (Deploy.BaseIndex) that is not the current one: the
// client reads the environment again and retries, as kubectl apply does.
var ErrEnvMoved = errors.New("environment moved")

// MovedError refuses a deploy planned against revision Base while the
// environment is at revision At; it is ErrEnvMoved (errors.Is). Its
// words keep those `fixpoint plan`'s users know ("run plan again").
type MovedError struct {
	Base, At uint64
}

func (e *MovedError) Error() string {
	return fmt.Sprintf("%v: this change was planned against revision %d and the environment is at %d; read it again and retry (with a plan: run plan again)", ErrEnvMoved, e.Base, e.At)
}

// Is makes errors.Is(err, ErrEnvMoved) hold.
func (e *MovedError) Is(target error) bool { return target == ErrEnvMoved }

func movedError(base, at uint64) error { return &MovedError{Base: base, At: at} }

// MaxRemoveUnits caps the units one deploy names to remove.
const MaxRemoveUnits = 4096

// checkRemoveNames checks Deploy.RemoveUnits without the state: unit
// names, each once, at most MaxRemoveUnits.
func checkRemoveNames(names []string) error {
	if len(names) > MaxRemoveUnits {
		return fmt.Errorf("remove_units names %d units; one change removes at most %d", len(names), MaxRemoveUnits)
	}
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if err := CheckUnitName(n); err != nil {
			return fmt.Errorf("remove_units: %w", err)
		}
		if seen[n] {
			return fmt.Errorf("remove_units names unit %s twice; name each unit once", n)
		}
		seen[n] = true
	}
	return nil
}

// removeBySvc groups named removals by service.
func removeBySvc(names []string) map[string]map[string]bool {
	if len(names) == 0 {
		return nil
	}
	out := map[string]map[string]bool{}
	for _, n := range names {
		svc := ServiceOf(n)
		if out[svc] == nil {
			out[svc] = map[string]bool{}
		}
		out[svc][n] = true
	}
	return out
}

// checkRemoveUnits refuses named removals that s cannot carry out: a unit
// that does not exist or is already dying, a unit of a service the change
// removes, a subordinate unit, and a service whose count in the
// environment is not the number of its alive units that remain.
func checkRemoveUnits(s *State, d *Desired) error {
	if len(d.RemoveUnits) == 0 {
		return nil
	}
	env := s.Name
	if env == "" {
		env = d.Name
	}
	for _, name := range d.RemoveUnits {
		u := s.Units[name]
		switch {
		case u == nil:
			return fmt.Errorf("unit %s does not exist in environment %s; see fixpoint status", name, env)
		case d.Services[u.Service] == nil:
			return fmt.Errorf("unit %s belongs to service %s, which this change removes with all its units; leave the unit out, or keep the service", name, u.Service)
		case u.Principal != "" || d.Services[u.Service].Subordinate:
			return fmt.Errorf("unit %s is subordinate: it goes with its principal unit or its relation; remove those instead", name)
		case u.Life != Alive:
			return fmt.Errorf("unit %s is already %s; see fixpoint status", name, u.Life)
		}
	}
	unitsBy := unitsByService(s)
	bySvc := removeBySvc(d.RemoveUnits)
	for _, svc := range sortedKeys(bySvc) {
		named := bySvc[svc]
		left := len(aliveUnits(unitsBy[svc])) - len(named)
		if want := d.Services[svc].Units; want != left {
			return fmt.Errorf("service %s: removing %s leaves %d units, but the environment asks for %d; set services.%s.units to %d", svc, UnitList(sortedUnits(named)), left, want, svc, left)
		}
	}
	return nil
}

// CheckRemoveUnits is checkRemoveUnits, for a plan made outside a
// deploy (POST /v1/plan).
func (s *State) CheckRemoveUnits(d *Desired) error { return checkRemoveUnits(s, d) }

// sortedUnits is the units of set, in unit order.
func sortedUnits(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return UnitLess(out[i], out[j]) })
	return out
}

// namedRemovals takes the units of alive that named lists out of it:
// it returns those that stay and the names of those that go.
func namedRemovals(alive []*Unit, named map[string]bool) (kept []*Unit, gone []string) {
	if len(named) == 0 {
		return alive, nil
	}
	kept = make([]*Unit, 0, len(alive))
	for _, u := range alive {
		if named[u.Name] {
			gone = append(gone, u.Name)
			continue
		}
		kept = append(kept, u)
	}
	return kept, gone
}
