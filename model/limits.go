package model

import (
	"fmt"
	"strings"
)

// Limits bound what the replicated state may hold, so that no command,
// however small its entry, makes every replica allocate without bound: a
// 200-byte deploy of a billion units is refused rather than committed and
// replayed on every start. The limits in force are part of the state
// (State.Limits, set by an OpLimits entry): every replica judges an entry
// by the limits the log set before it, so a replay refuses the same
// entries in the same way whatever flags its node runs with.
type Limits struct {
	// UnitsPerService caps the units of one service, subordinate units
	// (one per related principal unit) included.
	UnitsPerService int `json:"units_per_service"`
	// Units caps the units of the environment, dying ones included.
	Units int `json:"units"`
	// Services caps the services of the environment.
	Services int `json:"services"`
	// Relations caps the relations, peer relations included.
	Relations int `json:"relations"`
	// ConfigBytes caps one service's config (ConfigSize), charm
	// defaults included.
	ConfigBytes int `json:"config_bytes"`
	// ConfigValueBytes caps one config value.
	ConfigValueBytes int `json:"config_value_bytes"`
	// ConfigTotalBytes caps the config of all services together: charm
	// defaults are sent once per charm but kept once per service.
	ConfigTotalBytes int `json:"config_total_bytes"`
	// Machines caps the registered machines: what join tokens may
	// register before machines are forgotten.
	Machines int `json:"machines"`
	// Environments caps the environments of the cluster, the default one
	// included; 0 is DefaultEnvironments (EnvironmentsInForce), which is
	// why DefaultLimits leaves it 0: a state that records no limits
	// replays alike on every build. Its flag (--max-environments) is proposed only on
	// a cluster whose level applies it (model.LevelRecorded).
	Environments int `json:"environments,omitempty"`
}

// DefaultLimits are what a user does not hit by accident. A state that
// records no limits (written before limits existed) is held to them, so
// they are part of how entries replay: change them only with a way for
// such states to keep the old values.
var DefaultLimits = Limits{
	UnitsPerService:  100_000,
	Units:            1_000_000,
	Services:         10_000,
	Relations:        10_000,
	ConfigBytes:      1 << 20,
	ConfigValueBytes: 256 << 10,
	ConfigTotalBytes: 64 << 20,
	Machines:         10_000,
}

// CeilingLimits are the most any limit may be raised to: the state of an
// environment at these still fits a large server, and no flag or command
// lifts them.
var CeilingLimits = Limits{
	UnitsPerService:  10_000_000,
	Units:            10_000_000,
	Services:         1_000_000,
	Relations:        1_000_000,
	ConfigBytes:      16 << 20,
	ConfigValueBytes: 16 << 20,
	ConfigTotalBytes: 1 << 30,
	Machines:         1_000_000,
}

// LimitField describes one limit: its flag on `server`, `up` and `vet`,
// and where it is in a Limits.
type LimitField struct {
	// Flag is the command-line flag that sets it, e.g. "max-units".
	Flag string
	// Help says what it bounds, for the flag's usage.
	Help string
	// Of returns the limit's place in l.
	Of func(l *Limits) *int
}

// LimitFields lists every limit, in the order flags and messages show them.
var LimitFields = []LimitField{
	{"max-units-per-service", "most units one service may have (subordinate units included)", func(l *Limits) *int { return &l.UnitsPerService }},
	{"max-units", "most units the environment may hold, dying ones included", func(l *Limits) *int { return &l.Units }},
	{"max-services", "most services the environment may declare", func(l *Limits) *int { return &l.Services }},
	{"max-relations", "most relations the environment may hold, peer relations included", func(l *Limits) *int { return &l.Relations }},
	{"max-config-bytes", "most bytes of config one service may hold, charm defaults included", func(l *Limits) *int { return &l.ConfigBytes }},
	{"max-config-value-bytes", "most bytes one config value may hold", func(l *Limits) *int { return &l.ConfigValueBytes }},
	{"max-config-total-bytes", "most bytes of config all services together may hold", func(l *Limits) *int { return &l.ConfigTotalBytes }},
	{"max-machines", "most machines that may be registered", func(l *Limits) *int { return &l.Machines }},
	{"max-environments", "most environments the cluster may hold, the default one included (0: 1,000); recorded once the cluster's feature level is 2", func(l *Limits) *int { return &l.Environments }},
}

// Validate checks that every limit is at least 1 and at most its ceiling.
func (l Limits) Validate() error {
	ceil := CeilingLimits
	for _, f := range LimitFields {
		v, top := *f.Of(&l), *f.Of(&ceil)
		if f.Of(&l) == &l.Environments {
			continue // 0 is its default: checked below
		}
		if v < 1 || v > top {
			return fmt.Errorf("limit --%s is %d; it must be between 1 and %d", f.Flag, v, top)
		}
	}
	if l.Environments < 0 || l.Environments > CeilingEnvironments {
		return fmt.Errorf("limit --max-environments is %d; it must be between 1 and %d (0 for the default, %d)", l.Environments, CeilingEnvironments, DefaultEnvironments)
	}
	return nil
}

// LimitsInForce returns the limits the next entry is applied under: those
// the log last set, or DefaultLimits for a state that never recorded any.
func (s *State) LimitsInForce() Limits {
	if s.Limits == nil {
		return DefaultLimits
	}
	return *s.Limits
}

// Check returns every way d exceeds l, each at the path of what to
// change. It runs before anything is allocated per unit: d holds unit
// counts, not units.
func (l Limits) Check(d *Desired) Problems {
	var ps Problems
	if n := len(d.Services); n > l.Services {
		ps.add([]string{"services"}, "%d services; the limit is %d (%s)", n, l.Services, raise("max-services"))
	}
	if n := len(d.Relations); n > l.Relations {
		ps.add([]string{"relations"}, "%d relations, peer relations included; the limit is %d (%s)", n, l.Relations, raise("max-relations"))
	}
	per, total := l.units(d)
	for _, name := range sortedKeys(per) {
		n := per[name]
		switch {
		case n <= l.UnitsPerService:
		case d.Services[name].Subordinate:
			ps.add([]string{"services", name}, "subordinate service %s would get more than %d units, one per principal unit it is related to; the limit per service is %d (%s)", name, l.UnitsPerService, l.UnitsPerService, raise("max-units-per-service"))
		default:
			ps.add([]string{"services", name, "units"}, "units is %d; the limit per service is %d (%s)", d.Services[name].Units, l.UnitsPerService, raise("max-units-per-service"))
		}
	}
	if total > l.Units {
		ps.add([]string{"services"}, "the services ask for more than %d units in all, subordinate units included; the limit is %d (%s)", l.Units, l.Units, raise("max-units"))
	}
	l.checkConfig(d, &ps)
	return ps
}

// checkConfig bounds config per value, per service and in all. It stops
// counting once the total is over, so its own work is bounded too.
func (l Limits) checkConfig(d *Desired, ps *Problems) {
	total := 0
	for _, name := range sortedKeys(d.Services) {
		cfg := d.Services[name].Config
		size := 0
		for _, k := range sortedKeys(cfg) {
			v := ConfigValueSize(cfg[k])
			if v > l.ConfigValueBytes {
				ps.add([]string{"services", name, "config", k}, "a value of %d bytes; the limit is %d (%s)", v, l.ConfigValueBytes, raise("max-config-value-bytes"))
			}
			size += len(k) + v
		}
		if size > l.ConfigBytes {
			ps.add([]string{"services", name, "config"}, "%d bytes of config, charm defaults included; the limit per service is %d (%s)", size, l.ConfigBytes, raise("max-config-bytes"))
		}
		if total += size; total > l.ConfigTotalBytes {
			ps.add([]string{"services"}, "more than %d bytes of config in all services, charm defaults included; the limit is %d (%s)", l.ConfigTotalBytes, l.ConfigTotalBytes, raise("max-config-total-bytes"))
			return
		}
	}
}

// ConfigValueSize is what a config value counts towards the config
// limits: a string's length, 8 bytes for a number or a boolean.
func ConfigValueSize(v any) int {
	if s, ok := v.(string); ok {
		return len(s)
	}
	return 8
}

// units is how many units each service of d asks for, and all of them
// together. A subordinate service gets at most one per unit of each
// principal service related to it over a container-scoped relation
// (settle attaches no more). Counts stop past the limits, so they neither
// overflow nor cost more than the limits.
func (l Limits) units(d *Desired) (per map[string]int, total int) {
	per = map[string]int{}
	for name, ds := range d.Services {
		if !ds.Subordinate {
			per[name] = min(ds.Units, l.UnitsPerService+1)
		}
	}
	principals := map[string]map[string]bool{}
	for _, r := range d.Relations {
		if r.Scope != Container || len(r.Endpoints) != 2 {
			continue
		}
		for i, e := range r.Endpoints {
			sub, p := d.Services[e.Service], d.Services[r.Endpoints[1-i].Service]
			if sub == nil || p == nil || !sub.Subordinate || p.Subordinate {
				continue
			}
			if principals[sub.Name] == nil {
				principals[sub.Name] = map[string]bool{}
			}
			principals[sub.Name][p.Name] = true
		}
	}
	for sub, ps := range principals {
		for p := range ps {
			per[sub] = addCapped(per[sub], per[p], l.UnitsPerService+1)
		}
	}
	for _, n := range per {
		total = addCapped(total, n, l.Units+1)
	}
	return per, total
}

// addCapped adds without passing top (and so without overflowing).
func addCapped(a, b, top int) int {
	if b > top-a {
		return top
	}
	return a + b
}

// raise says how to raise a limit.
func raise(flag string) string {
	return "raise it with --" + flag + " on the servers"
}

// checkDying refuses a deploy that would run total units while earlier
// changes' units are still dying: together they must fit the Units limit,
// so that deploys made while agents are away cannot pile up units.
func (s *State) checkDying(d *Desired, l Limits) error {
	dying := s.stats().nEnded
	if dying == 0 {
		return nil
	}
	_, total := l.units(d)
	if dying+total <= l.Units {
		return nil
	}
	var ps Problems
	ps.add([]string{"services"}, "%d units are still dying from earlier changes and the environment asks for %d more: over the limit of %d units (%s); wait until `fixpoint status` shows them gone, or ask for fewer", dying, total, l.Units, raise("max-units"))
	return ps
}

// checkSetLimits refuses limits out of range; setting the limits in force
// again is a no-op.
func (s *State) checkSetLimits(l *Limits) (noop bool, err error) {
	if err := l.Validate(); err != nil {
		return false, err
	}
	return s.LimitsInForce() == *l, nil
}

// String lists the limits as their flags.
func (l Limits) String() string {
	parts := make([]string, len(LimitFields))
	for i, f := range LimitFields {
		parts[i] = fmt.Sprintf("--%s=%d", f.Flag, *f.Of(&l))
	}
	return strings.Join(parts, " ")
}
