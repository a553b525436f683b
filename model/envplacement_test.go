package model

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func register(name, addr string, labels map[string]string) *Command {
	return &Command{Op: OpMachine, Machine: &RegisterMachine{Name: name, Address: addr, Number: true, Labels: labels}}
}

// placedOn lists the machines st's alive units of svc are on, by unit.
func placedOn(st *State, svc string) []string {
	var out []string
	for _, u := range st.UnitsOf(svc) {
		out = append(out, u.Name+"@"+u.Machine)
	}
	return out
}

// TestEnvironmentPlacementByLabels: a staging environment placed on
// zone=b lands only on the machine that registered that label, while the
// default environment spreads over every machine; labels reach every
// environment's copy of the machines.
func TestEnvironmentPlacementByLabels(t *testing.T) {
	cl := NewCluster()
	capply(t, cl, 1, register("m1", "10.0.0.1", map[string]string{"zone": "a"}))
	capply(t, cl, 2, register("m2", "10.0.0.2", map[string]string{"zone": "b", "disk": "ssd"}))
	capply(t, cl, 3, register("m3", "10.0.0.3", nil))
	capply(t, cl, 4, envAdd("staging", uuidA))
	c := deployTo("staging", "staging", 4)
	c.Deploy.Env.Placement = &EnvPlacement{Labels: map[string]string{"zone": "b"}}
	capply(t, cl, 5, c)
	capply(t, cl, 6, deployTo("", "shop", 3))

	staging := cl.Envs["staging"].State
	for _, u := range staging.UnitsOf("db") {
		if u.Machine != "m2" {
			t.Errorf("staging's %s is on %q; want m2, the only machine with zone=b", u.Name, u.Machine)
		}
	}
	got := map[string]bool{}
	for _, u := range cl.Default.UnitsOf("db") {
		got[u.Machine] = true
	}
	if len(got) != 3 {
		t.Errorf("the default environment's units are on %v; want all three machines (no placement: every machine)", placedOn(cl.Default, "db"))
	}
	if d := staging.ClusterFieldsDiffer(cl.Default); d != "" {
		t.Errorf("staging's copy of the machines differs in %s", d)
	}
	if m := staging.Machines["m2"]; m.Labels["disk"] != "ssd" {
		t.Errorf("staging's copy of m2 has labels %v", m.Labels)
	}
	// The rule comes back in the environment's document.
	doc, _ := staging.SynthesizeDocument()
	if doc == nil || doc.Placement == nil || doc.Placement.Labels["zone"] != "b" {
		t.Errorf("document's placement = %+v", doc)
	}
}

// TestEnvironmentPlacementByMachines: a machine list admits only the
// machines it names; with none of them registered the units wait.
func TestEnvironmentPlacementByMachines(t *testing.T) {
	s := NewState()
	e := env(nil)
	e.Placement = &EnvPlacement{Machines: []string{"m2", "m9"}}
	apply(t, s, 1, deployCmd(e))
	apply(t, s, 2, register("m1", "10.0.0.1", nil))
	for _, u := range allUnits(s) {
		if u.Machine != "" {
			t.Fatalf("%s placed on %s, which the environment's placement does not name", u.Name, u.Machine)
		}
	}
	apply(t, s, 3, register("m2", "10.0.0.2", nil))
	for _, u := range allUnits(s) {
		if u.Machine != "m2" {
			t.Fatalf("%s on %q; want m2", u.Name, u.Machine)
		}
	}
}

// TestMachineLabelChangeMovesNothing: a re-registration that drops the
// label the rule asks for leaves the units already placed there (they are
// not moved silently); new units wait for a machine that has it.
func TestMachineLabelChangeMovesNothing(t *testing.T) {
	s := NewState()
	apply(t, s, 1, register("m1", "10.0.0.1", map[string]string{"zone": "a"}))
	e := env(nil)
	e.Placement = &EnvPlacement{Labels: map[string]string{"zone": "a"}}
	apply(t, s, 2, deployCmd(e))
	// The agent restarts with another label: its credential renews it.
	cred := s.Machines["m1"].Credential
	apply(t, s, 3, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m1", Address: "10.0.0.1", Number: true, Renew: cred, Labels: map[string]string{"zone": "c"}}})
	if got := s.Machines["m1"].Labels["zone"]; got != "c" {
		t.Fatalf("m1's zone = %q after re-registration; want c", got)
	}
	for _, u := range allUnits(s) {
		if u.Machine != "m1" {
			t.Fatalf("%s moved to %q when its machine's labels changed; placed units stay", u.Name, u.Machine)
		}
	}
	e.Services["db"] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Units: intp(3)}
	apply(t, s, 4, deployCmd(e))
	if u := s.Units["db/2"]; u.Machine != "" {
		t.Fatalf("db/2 placed on %s, which no longer has zone=a", u.Machine)
	}
	// An unchanged renewal with the same labels is a no-op; other labels
	// are a change.
	same := &RegisterMachine{Name: "m1", Address: "10.0.0.1", Number: true, Renew: cred, Labels: map[string]string{"zone": "c"}}
	if noop, err := s.checkRegister(same); err != nil || !noop {
		t.Errorf("renewal with the same labels: noop %v, err %v; want a no-op", noop, err)
	}
	same.Labels = nil
	if noop, _ := s.checkRegister(same); noop {
		t.Error("renewal dropping the labels counted as a no-op")
	}
}

// TestServicePlacementStaysWithinTheEnvironments: a pin outside a
// machine list is refused at the service's path by Resolve; one outside
// a label rule (unregistered, or lacking the label) by the deploy, which
// then changes nothing.
func TestServicePlacementStaysWithinTheEnvironments(t *testing.T) {
	e := env(nil)
	e.Placement = &EnvPlacement{Machines: []string{"m1"}}
	e.Services["db"] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Placement: []string{"m1", "m2"}}
	if msg := resolveErr(t, e); !strings.Contains(msg, "services.db.placement.1: machine m2 is outside the environment's placement") {
		t.Errorf("Resolve said %q", msg)
	}

	s := NewState()
	apply(t, s, 1, register("m1", "10.0.0.1", map[string]string{"zone": "a"}))
	e = env(nil)
	e.Placement = &EnvPlacement{Labels: map[string]string{"zone": "b"}}
	e.Services["db"] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Placement: []string{"m1"}}
	e.Services["web"] = ServiceSpec{Charm: "./web", CharmHash: "h-web", Placement: []string{"m7"}}
	before := s.Clone()
	_, err := s.Apply(2, deployCmd(e))
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != 2 {
		t.Fatalf("deploy err = %v; want two problems", err)
	}
	if p := ps[0]; strings.Join(p.Path, ".") != "services.db.placement.0" || !strings.Contains(p.Msg, "machine m1 (labels zone=a) is outside the environment's placement (labels {zone=b})") {
		t.Errorf("problem 0: %v", p)
	}
	if p := ps[1]; strings.Join(p.Path, ".") != "services.web.placement.0" || !strings.Contains(p.Msg, "machine m7 is not registered") {
		t.Errorf("problem 1: %v", p)
	}
	if len(s.Services) != len(before.Services) || s.Placement != nil {
		t.Error("a refused deploy changed the state")
	}
}

// TestEnvironmentPlacementShapeRefused: the file's rule is checked for
// shape and size at its own path.
func TestEnvironmentPlacementShapeRefused(t *testing.T) {
	many := map[string]string{}
	for i := range MaxLabels + 1 {
		many["k"+strings.Repeat("x", i)] = "v"
	}
	for _, tc := range []struct {
		p    *EnvPlacement
		want string
	}{
		{&EnvPlacement{}, "placement: is empty"},
		{&EnvPlacement{Machines: []string{"m1"}, Labels: map[string]string{"zone": "a"}}, "placement: gives both machines and labels"},
		{&EnvPlacement{Machines: []string{"m1", "m1"}}, "placement.machines.1: machine m1 is named twice"},
		{&EnvPlacement{Machines: []string{"M 1"}}, "placement.machines.0: "},
		{&EnvPlacement{Labels: map[string]string{"zone": "-a"}}, "placement.labels.zone: label value"},
		{&EnvPlacement{Labels: map[string]string{"zo ne": "a"}}, "placement.labels.zo ne: label key"},
		{&EnvPlacement{Labels: map[string]string{"zone": strings.Repeat("a", 64)}}, "placement.labels.zone: label value"},
		{&EnvPlacement{Labels: many}, "placement.labels: 17 labels; at most 16"},
	} {
		e := env(nil)
		e.Placement = tc.p
		if msg := resolveErr(t, e); !strings.Contains(msg, tc.want) {
			t.Errorf("placement %+v: Resolve said %q; want %q", tc.p, msg, tc.want)
		}
	}
}

// TestRegisterLabelsChecked: a registration's labels are bounded and
// shaped before anything is proposed.
func TestRegisterLabelsChecked(t *testing.T) {
	many := map[string]string{}
	for i := range MaxLabels + 1 {
		many["k"+strings.Repeat("x", i)] = "v"
	}
	for _, labels := range []map[string]string{many, {"zone": ""}, {"": "a"}, {"zone": "a=b"}} {
		c := register("m1", "10.0.0.1", labels)
		if err := c.Validate(); err == nil {
			t.Errorf("labels %v accepted", labels)
		}
	}
	if err := register("m1", "10.0.0.1", map[string]string{"zone": "eu-west.1", "Disk_Type": "ssd"}).Validate(); err != nil {
		t.Errorf("good labels refused: %v", err)
	}
	if k, v, err := ParseLabel("zone=a"); err != nil || k != "zone" || v != "a" {
		t.Errorf("ParseLabel(zone=a) = %q %q %v", k, v, err)
	}
	for _, bad := range []string{"zone", "=a", "zone=", "zone=a b"} {
		if _, _, err := ParseLabel(bad); err == nil {
			t.Errorf("ParseLabel(%q) accepted", bad)
		}
	}
}

// TestPlacementLevelRows: a registration with labels and a deploy with a
// placement need the recorded level; without them they need no more.
func TestPlacementLevelRows(t *testing.T) {
	if l, _ := register("m1", "10.0.0.1", map[string]string{"zone": "a"}).Level(); l != LevelRecorded {
		t.Errorf("labelled registration needs level %d; want %d", l, LevelRecorded)
	}
	plain := &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m1", Address: "10.0.0.1"}}
	if l, _ := plain.Level(); l != LevelBase {
		t.Errorf("plain registration needs level %d", l)
	}
	e := env(nil)
	e.Placement = &EnvPlacement{Machines: []string{"m1"}}
	if l, _ := deployCmd(e).Level(); l != LevelRecorded {
		t.Errorf("deploy with placement needs level %d; want %d", l, LevelRecorded)
	}
}

// TestEnvironmentPlacementIsDeterministic: the same entries, applied to
// fresh states many times, place every unit alike whatever the maps'
// order, and the plan says the rule's change.
func TestEnvironmentPlacementIsDeterministic(t *testing.T) {
	run := func() []string {
		s := NewState()
		for i, m := range []string{"m4", "m2", "m3", "m1", "m5"} {
			zone := "a"
			if i%2 == 1 {
				zone = "b"
			}
			apply(t, s, uint64(i+1), register(m, "10.0.0.1", map[string]string{"zone": zone, "rack": m}))
		}
		e := env(nil)
		e.Placement = &EnvPlacement{Labels: map[string]string{"zone": "a"}}
		e.Services["db"] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Units: intp(7)}
		apply(t, s, 10, deployCmd(e))
		return append(placedOn(s, "db"), placedOn(s, "web")...)
	}
	first := run()
	for _, p := range first {
		if strings.HasSuffix(p, "@m2") || strings.HasSuffix(p, "@m1") || strings.HasSuffix(p, "@") {
			t.Fatalf("unit %s outside zone a (m4, m3, m5)", p)
		}
	}
	for range 20 {
		if got := run(); !slices.Equal(got, first) {
			t.Fatalf("placement differs between runs:\n%v\n%v", first, got)
		}
	}
	s := NewState()
	e := env(nil)
	e.Placement = &EnvPlacement{Machines: []string{"m1"}}
	d, err := Resolve(e, charms())
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range Plan(s, d) {
		if c.Kind == SetEnvPlacement {
			lines = append(lines, c.String())
		}
	}
	if len(lines) != 1 || lines[0] != "~ placement every machine -> machines [m1]" {
		t.Errorf("plan's placement lines = %q", lines)
	}
}

// allUnits is every unit of st, by name.
func allUnits(st *State) []*Unit {
	var out []*Unit
	for _, name := range st.SortedUnits() {
		out = append(out, st.Units[name])
	}
	return out
}
