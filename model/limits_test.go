package model

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// small are limits a test reaches with a few units.
var small = Limits{UnitsPerService: 3, Units: 5, Services: 3, Relations: 4,
	ConfigBytes: 64, ConfigValueBytes: 32, ConfigTotalBytes: 100, Machines: 2}

// problemAt returns the problems of err at path, failing unless err is
// Problems.
func problemAt(t *testing.T, err error, path string) []string {
	t.Helper()
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v (%T) is not Problems", err, err)
	}
	var out []string
	for _, p := range ps {
		if strings.Join(p.Path, ".") == path {
			out = append(out, p.Msg)
		}
	}
	return out
}

// stateJSON is the state's bytes with its index left out: a refused
// entry moves only the index.
func stateJSON(t *testing.T, s *State) string {
	t.Helper()
	cp := *s
	cp.Index = 0
	b, err := json.Marshal(&cp)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A deploy over the default units per service is refused at
// services.web.units, saying which flag raises the limit, and leaves the
// state as it was.
func TestDefaultLimitRefusesAnOversizedService(t *testing.T) {
	s := NewState()
	apply(t, s, 1, deployCmd(env(nil)))
	before := stateJSON(t, s)
	e := env(nil)
	e.Services["web"] = ServiceSpec{Charm: "./web", CharmHash: "h-web", Units: intp(DefaultLimits.UnitsPerService + 1)}
	_, err := s.Apply(2, deployCmd(e))
	if err == nil {
		t.Fatalf("a deploy of %d units of one service was accepted", DefaultLimits.UnitsPerService+1)
	}
	msgs := problemAt(t, err, "services.web.units")
	if len(msgs) != 1 || !strings.Contains(msgs[0], "--max-units-per-service") || !strings.Contains(msgs[0], "100000") {
		t.Fatalf("problems at services.web.units: %q (error %v)", msgs, err)
	}
	if after := stateJSON(t, s); after != before {
		t.Fatalf("the refused deploy changed the state:\n%s\n%s", before, after)
	}
}

// Each limit is checked where it applies, with the path of what to change.
func TestLimitsCheckEachBound(t *testing.T) {
	long := strings.Repeat("x", 40)
	for _, c := range []struct {
		what  string
		edit  func(e *Environment)
		rels  map[string][]string
		path  string
		flag  string
		clean bool
	}{
		{what: "within every limit", edit: func(*Environment) {}, clean: true},
		{what: "units of one service", edit: func(e *Environment) {
			e.Services["web"] = ServiceSpec{Charm: "./web", CharmHash: "h-web", Units: intp(4)}
		}, path: "services.web.units", flag: "max-units-per-service"},
		{what: "units in all", edit: func(e *Environment) {
			e.Services["db"] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Units: intp(3)}
			e.Services["web"] = ServiceSpec{Charm: "./web", CharmHash: "h-web", Units: intp(3)}
		}, path: "services", flag: "max-units"},
		{what: "subordinate units count", edit: func(e *Environment) {
			e.Services["db"] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Units: intp(3)}
			e.Services["web"] = ServiceSpec{Charm: "./web", CharmHash: "h-web", Units: intp(0)}
			e.Services["log"] = ServiceSpec{Charm: "./log", CharmHash: "h-log"}
		}, rels: map[string][]string{"db-log": {"db:juju-info", "log:host"}}, path: "services", flag: "max-units"},
		{what: "services", edit: func(e *Environment) {
			e.Services["cache"] = ServiceSpec{Charm: "./cache", CharmHash: "h-cache", Units: intp(0)}
			e.Services["cache2"] = ServiceSpec{Charm: "./cache", CharmHash: "h-cache", Units: intp(0)}
		}, path: "services", flag: "max-services"},
		{what: "relations", edit: func(e *Environment) {
			e.Services["cache"] = ServiceSpec{Charm: "./cache", CharmHash: "h-cache", Units: intp(0)}
			e.Services["db2"] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Units: intp(0)}
		}, rels: map[string][]string{"web-db": {"web:db", "db:db"}, "web-db2": {"web:db", "db2:db"}, "web-cache": {"web:cache", "cache"}}, path: "relations", flag: "max-relations"},
		{what: "a config value", edit: func(e *Environment) {
			e.Services["db"] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Units: intp(1), Config: map[string]any{"mode": long}}
		}, path: "services.db.config.mode", flag: "max-config-value-bytes"},
		{what: "a service's config", edit: func(e *Environment) {
			e.Services["db"] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Units: intp(1), Config: map[string]any{"mode": long[:30]}}
			e.Services["db2"] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Units: intp(0), Config: map[string]any{"mode": long[:30]}}
		}, path: "services.db.config", flag: "max-config-bytes"},
	} {
		t.Run(c.what, func(t *testing.T) {
			e := env(c.rels)
			e.Services["web"] = ServiceSpec{Charm: "./web", CharmHash: "h-web", Units: intp(1)}
			e.Services["db"] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Units: intp(1)}
			c.edit(e)
			d, err := Resolve(e, charms())
			if err != nil {
				t.Fatal(err)
			}
			l := small
			if c.what == "a service's config" {
				// 2 services of 2 options: only the per-service bound
				// is under test.
				l.ConfigBytes, l.ConfigTotalBytes = 50, 1000
			}
			ps := l.Check(d)
			if c.clean {
				if len(ps) > 0 {
					t.Fatalf("problems within the limits: %v", ps)
				}
				return
			}
			msgs := problemAt(t, ps, c.path)
			if len(msgs) == 0 || !strings.Contains(strings.Join(msgs, "\n"), "--"+c.flag) {
				t.Fatalf("problems %v; want one at %s naming --%s", ps, c.path, c.flag)
			}
		})
	}
}

// The total of config stops being counted once it is over, and says so.
func TestConfigTotalIsBounded(t *testing.T) {
	e := env(nil)
	for _, n := range []string{"a", "b", "c"} {
		e.Services[n] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Units: intp(0), Config: map[string]any{"mode": strings.Repeat("y", 30)}}
	}
	d, err := Resolve(e, charms())
	if err != nil {
		t.Fatal(err)
	}
	l := small
	l.Services, l.ConfigValueBytes, l.ConfigBytes = 10, 100, 100
	msgs := problemAt(t, l.Check(d), "services")
	if len(msgs) != 1 || !strings.Contains(msgs[0], "--max-config-total-bytes") {
		t.Fatalf("problems at services: %q", msgs)
	}
}

// The limits in force are replicated: an OpLimits entry sets them for the
// entries after it, out-of-range limits are refused by Validate and by the
// FSM alike, and two replicas of one log agree byte for byte.
func TestLimitsAreReplicatedState(t *testing.T) {
	big := env(nil)
	big.Services["web"] = ServiceSpec{Charm: "./web", CharmHash: "h-web", Units: intp(4)}
	log := []*Command{
		{Op: OpLimits, Limits: &small},
		deployCmd(big), // refused: 4 units of web, the limit 3
		{Op: OpLimits, Limits: &Limits{UnitsPerService: 4, Units: 10, Services: 3, Relations: 4, ConfigBytes: 64, ConfigValueBytes: 32, ConfigTotalBytes: 100, Machines: 2}},
		deployCmd(big), // accepted now
	}
	var states []string
	for range 2 {
		s := NewState()
		var errs []bool
		for i, c := range log {
			_, err := s.Apply(uint64(i+1), c)
			errs = append(errs, err != nil)
		}
		if !slices.Equal(errs, []bool{false, true, false, false}) {
			t.Fatalf("refusals %v, want only the first deploy refused", errs)
		}
		if n := len(s.UnitsOf("web")); n != 4 {
			t.Fatalf("web has %d units, want 4", n)
		}
		states = append(states, stateJSON(t, s))
	}
	if states[0] != states[1] {
		t.Fatal("two replicas of one log differ")
	}
	for _, l := range []Limits{{}, func() Limits { l := DefaultLimits; l.Units = CeilingLimits.Units + 1; return l }()} {
		c := &Command{Op: OpLimits, Limits: &l}
		if c.Validate() == nil {
			t.Errorf("Validate accepted limits %+v", l)
		}
		s := NewState()
		if _, err := s.Apply(1, c); err == nil || s.Limits != nil {
			t.Errorf("the FSM accepted limits %+v", l)
		}
	}
}

// Units still dying count towards the limit, so that deploys made while
// agents are away cannot pile units up.
func TestDyingUnitsCountTowardsTheLimit(t *testing.T) {
	s := NewState()
	apply(t, s, 1, &Command{Op: OpLimits, Limits: &small})
	apply(t, s, 2, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "a", Address: "10.0.0.1"}})
	e := env(nil)
	e.Services["web"] = ServiceSpec{Charm: "./web", CharmHash: "h-web", Units: intp(3)}
	e.Services["db"] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Units: intp(0)}
	apply(t, s, 3, deployCmd(e))
	for i, u := range []string{"web/0", "web/1", "web/2"} {
		apply(t, s, uint64(4+i), &Command{Op: OpResults, Results: []Result{{Unit: u, Hash: "x", Seen: &Seen{Life: Alive}}}})
	}
	// web goes, its 3 units dying; db asks for 3: 6 over 5.
	e2 := env(nil)
	delete(e2.Services, "web")
	e2.Services["db"] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Units: intp(3)}
	apply(t, s, 7, deployCmd(e2))
	e3 := env(nil)
	e3.Services["db"] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Units: intp(3)}
	e3.Services["web"] = ServiceSpec{Charm: "./web", CharmHash: "h-web", Units: intp(0)}
	before := stateJSON(t, s)
	_, err := s.Apply(8, deployCmd(e3))
	if msgs := problemAt(t, err, "services"); len(msgs) != 1 || !strings.Contains(msgs[0], "3 units are still dying") {
		t.Fatalf("a deploy over the limit with dying units: %v", err)
	}
	if stateJSON(t, s) != before {
		t.Fatal("the refused deploy changed the state")
	}
}

// Machines past the limit are refused; renewals and known machines are not.
func TestMachineLimit(t *testing.T) {
	s := NewState()
	apply(t, s, 1, &Command{Op: OpLimits, Limits: &small})
	apply(t, s, 2, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "a", Address: "10.0.0.1"}})
	apply(t, s, 3, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "b", Address: "10.0.0.2"}})
	_, err := s.Apply(4, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "c", Address: "10.0.0.3"}})
	if err == nil || !strings.Contains(err.Error(), "--max-machines") || s.Machines["c"] != nil {
		t.Fatalf("a third machine with a limit of 2: %v", err)
	}
	apply(t, s, 5, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "b", Address: "10.0.0.9"}})
}

// Admit answers as Apply does: what it refuses Apply refuses, and what it
// calls a no-op changes nothing Apply records but the request memory.
func TestAdmitAgreesWithApply(t *testing.T) {
	base := func() *State {
		s := NewState()
		apply(t, s, 1, &Command{Op: OpAuth, Auth: &Auth{Operator: strings.Repeat("a", 64), Join: strings.Repeat("b", 64)}})
		apply(t, s, 2, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m1", Address: "10.0.0.1", Credential: strings.Repeat("c", 64)}})
		apply(t, s, 3, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m2", Address: "10.0.0.2"}})
		apply(t, s, 4, deployCmd(env(nil)))
		apply(t, s, 5, &Command{Op: OpResults, Results: []Result{{Unit: "web/0", Hash: "h1", Error: "boom"}}})
		apply(t, s, 6, &Command{Op: OpResolve, Resolve: &ResolveUnit{Unit: "web/0"}})
		return s
	}
	huge := env(nil)
	huge.Services["web"] = ServiceSpec{Charm: "./web", CharmHash: "h-web", Units: intp(1_000_000_000)}
	stale := deployCmd(env(nil))
	stale.Deploy.BaseIndex = 2
	limits := DefaultLimits
	for _, c := range []struct {
		what       string
		cmd        *Command
		noop, fail bool
	}{
		{"resolve a unit not in error", &Command{Op: OpResolve, Resolve: &ResolveUnit{Unit: "db/0"}}, false, true},
		{"resolve a unit that does not exist", &Command{Op: OpResolve, Resolve: &ResolveUnit{Unit: "db/9"}}, false, true},
		{"resolve again", &Command{Op: OpResolve, Resolve: &ResolveUnit{Unit: "web/0"}}, true, false},
		{"resolve the other way", &Command{Op: OpResolve, Resolve: &ResolveUnit{Unit: "web/0", NoRetry: true}}, false, true},
		{"resolve a service none of whose units is in error", &Command{Op: OpResolve, Resolve: &ResolveUnit{Service: "db"}}, true, false},
		{"resolve a service that does not exist", &Command{Op: OpResolve, Resolve: &ResolveUnit{Service: "nope"}}, false, true},
		{"resolve all, all marked already", &Command{Op: OpResolve, Resolve: &ResolveUnit{All: true}}, true, false},
		{"resolve all the other way", &Command{Op: OpResolve, Resolve: &ResolveUnit{All: true, NoRetry: true}}, true, false},
		{"a billion units", deployCmd(huge), false, true},
		{"a stale deploy", stale, false, true},
		{"a deploy", deployCmd(env(map[string][]string{"web-db": {"web:db", "db:db"}})), false, false},
		{"the join token again", &Command{Op: OpJoin, Join: &JoinToken{Hash: strings.Repeat("b", 64)}}, true, false},
		{"a new join token", &Command{Op: OpJoin, Join: &JoinToken{Hash: strings.Repeat("d", 64)}}, false, false},
		{"the operator's token as join token", &Command{Op: OpJoin, Join: &JoinToken{Hash: strings.Repeat("a", 64)}}, false, true},
		{"reset a machine without credential", &Command{Op: OpReset, Reset: &ResetMachine{Name: "m2"}}, true, false},
		{"reset a machine not registered", &Command{Op: OpReset, Reset: &ResetMachine{Name: "m9"}}, false, true},
		{"reset a machine", &Command{Op: OpReset, Reset: &ResetMachine{Name: "m1"}}, false, false},
		{"renew unchanged", &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m1", Address: "10.0.0.1", Credential: strings.Repeat("c", 64), Renew: strings.Repeat("c", 64)}}, true, false},
		{"take a machine over", &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m1", Address: "10.0.0.1", Credential: strings.Repeat("e", 64)}}, false, true},
		{"the limits in force", &Command{Op: OpLimits, Limits: &limits}, true, false},
	} {
		t.Run(c.what, func(t *testing.T) {
			s := base()
			desired, err := c.cmd.Check()
			if err != nil {
				t.Fatal(err)
			}
			noop, aerr := s.Admit(c.cmd, desired)
			if noop != c.noop || (aerr != nil) != c.fail {
				t.Fatalf("Admit: noop %v, error %v; want noop %v, refused %v", noop, aerr, c.noop, c.fail)
			}
			before := stateJSON(t, s)
			_, err = s.Apply(7, c.cmd)
			if (err != nil) != c.fail {
				t.Fatalf("Apply: %v; Admit said %v", err, aerr)
			}
			if err != nil && err.Error() != aerr.Error() {
				t.Errorf("Apply refused with %q, Admit with %q", err, aerr)
			}
			if changed := stateJSON(t, s) != before; noop && changed {
				t.Errorf("Admit called it a no-op but Apply changed the state")
			}
		})
	}
}
