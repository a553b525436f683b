package model

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// EnvPlacement restricts an environment's units to some of the cluster's
// machines: those named (Machines), or those whose agent registered every
// label given (Labels). One of the two is set; an environment without a
// placement places its units on every machine.
type EnvPlacement struct {
	Machines []string          `json:"machines,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
}

// SetEnvPlacement is the change kind of a new environment placement
// rule; Old and New are the rules as EnvPlacement.String shows them.
const SetEnvPlacement = "env-placement"

// Bounds of placement and labels: a label is written on the agent's
// command line and in environment files, so it stays short, and a rule
// or a machine has a handful of them.
const (
	// MaxLabels caps the labels of a machine and of a placement rule.
	MaxLabels = 16
	// MaxLabelBytes caps a label's key and its value.
	MaxLabelBytes = 63
	// MaxPlacementMachines caps the machines a placement names.
	MaxPlacementMachines = 10_000
)

// CheckLabel refuses a label key or value that is not 1 to 63 letters,
// digits, '-', '_' or '.', starting and ending with a letter or digit (a
// Kubernetes label's shape), so that it reads the same on the command
// line, in files and in status.
func CheckLabel(what, s string) error {
	if s == "" || len(s) > MaxLabelBytes {
		return fmt.Errorf("label %s %s is %d bytes; it must be 1 to %d letters, digits, '-', '_' or '.'", what, Quote(s, 80), len(s), MaxLabelBytes)
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !alnum(c) && c != '-' && c != '_' && c != '.' {
			return fmt.Errorf("label %s %s holds %q; use letters, digits, '-', '_' or '.'", what, Quote(s, 80), c)
		}
	}
	if !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return fmt.Errorf("label %s %s must start and end with a letter or digit", what, Quote(s, 80))
	}
	return nil
}

// CheckLabels refuses more than MaxLabels labels or a malformed one, in
// key order so that the first problem named is always the same.
func CheckLabels(labels map[string]string) error {
	if len(labels) > MaxLabels {
		return fmt.Errorf("%d labels; at most %d are allowed", len(labels), MaxLabels)
	}
	for _, k := range sortedKeys(labels) {
		if err := CheckLabel("key", k); err != nil {
			return err
		}
		if err := CheckLabel("value", labels[k]); err != nil {
			return fmt.Errorf("label %s: %w", k, err)
		}
	}
	return nil
}

// ParseLabel reads k=v, as `fixpoint agent --label` takes it.
func ParseLabel(s string) (key, value string, err error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", fmt.Errorf("label %s is not KEY=VALUE (e.g. zone=a)", Quote(s, 80))
	}
	if err := CheckLabel("key", k); err != nil {
		return "", "", err
	}
	if err := CheckLabel("value", v); err != nil {
		return "", "", fmt.Errorf("label %s: %w", k, err)
	}
	return k, v, nil
}

// Admits reports whether the rule lets units on m: every machine when p
// is nil, else m named in Machines, or m carrying every label of Labels.
func (p *EnvPlacement) Admits(m *Machine) bool {
	switch {
	case p == nil:
		return true
	case len(p.Machines) > 0:
		return slices.Contains(p.Machines, m.Name)
	}
	for k, v := range p.Labels {
		if got, ok := m.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// String is the rule as a plan shows it.
func (p *EnvPlacement) String() string {
	switch {
	case p == nil:
		return "every machine"
	case len(p.Machines) > 0:
		return "machines [" + strings.Join(p.Machines, ",") + "]"
	}
	var kv []string
	for _, k := range sortedKeys(p.Labels) {
		kv = append(kv, k+"="+p.Labels[k])
	}
	return "labels {" + strings.Join(kv, ",") + "}"
}

func envPlacementEqual(a, b *EnvPlacement) bool {
	return a == nil && b == nil || a != nil && b != nil && slices.Equal(a.Machines, b.Machines) && maps.Equal(a.Labels, b.Labels)
}

// resolveEnvPlacement checks the environment's placement and that every
// service's pinned machines are among those a machine list admits (a
// label rule is judged against the registered machines by
// checkEnvPlacement).
func resolveEnvPlacement(env *Environment, d *Desired, ps *Problems) {
	p := env.Placement
	if p == nil {
		return
	}
	path := []string{"placement"}
	switch {
	case len(p.Machines) > 0 && len(p.Labels) > 0:
		ps.add(path, "gives both machines and labels; give one: machines: [\"m1\"] or labels: {zone: \"a\"}")
		return
	case len(p.Machines) == 0 && len(p.Labels) == 0:
		ps.add(path, "is empty; give machines: [\"m1\"] or labels: {zone: \"a\"}, or remove placement to use every machine")
		return
	case len(p.Machines) > MaxPlacementMachines:
		ps.add(append(path, "machines"), "names %d machines; at most %d are allowed", len(p.Machines), MaxPlacementMachines)
		return
	}
	seen := map[string]bool{}
	for i, m := range p.Machines {
		if err := CheckName(KindMachine, m); err != nil {
			ps.add(append(path, "machines", fmt.Sprint(i)), "%v", err)
		} else if seen[m] {
			ps.add(append(path, "machines", fmt.Sprint(i)), "machine %s is named twice", m)
		}
		seen[m] = true
	}
	if len(p.Labels) > MaxLabels {
		ps.add(append(path, "labels"), "%d labels; at most %d are allowed", len(p.Labels), MaxLabels)
		return
	}
	for _, k := range sortedKeys(p.Labels) {
		if err := CheckLabel("key", k); err != nil {
			ps.add(append(path, "labels", k), "%v", err)
		} else if err := CheckLabel("value", p.Labels[k]); err != nil {
			ps.add(append(path, "labels", k), "%v", err)
		}
	}
	d.Placement = &EnvPlacement{Machines: slices.Clone(p.Machines), Labels: maps.Clone(p.Labels)}
	if len(p.Machines) == 0 {
		return
	}
	for _, name := range sortedKeys(env.Services) {
		for i, m := range env.Services[name].Placement {
			if !seen[m] {
				ps.add([]string{"services", name, "placement", fmt.Sprint(i)}, "machine %s is outside the environment's placement (machines %s); pin the service to one of them or add %s to placement.machines",
					m, strings.Join(p.Machines, ", "), m)
			}
		}
	}
}

// checkEnvPlacement refuses a service pinned to a machine an environment
// placed by labels does not admit: the machine must be registered and
// carry the labels. Only pins the deploy changes are judged (a new
// service, a new pin list, a new rule), so that a machine whose labels
// changed later does not block every other edit of the environment.
func checkEnvPlacement(s *State, d *Desired) error {
	p := d.Placement
	if p == nil || len(p.Labels) == 0 {
		return nil
	}
	ruleSame := envPlacementEqual(s.Placement, p)
	var ps Problems
	for _, name := range sortedKeys(d.Services) {
		ds := d.Services[name]
		if cur := s.Services[name]; ruleSame && cur != nil && cur.Life == Alive && slices.Equal(cur.Placement, ds.Placement) {
			continue
		}
		for i, m := range ds.Placement {
			path := []string{"services", name, "placement", fmt.Sprint(i)}
			mach, ok := s.Machines[m]
			switch {
			case !ok:
				ps.add(path, "machine %s is not registered, so it cannot be judged against the environment's placement (%s); start its agent with those labels first, or pin a registered machine that has them", m, p)
			case !p.Admits(mach):
				ps.add(path, "machine %s (labels %s) is outside the environment's placement (%s); pin a machine that has them, or start its agent with --label for each", m, labelString(mach.Labels), p)
			}
		}
	}
	if len(ps) > 0 {
		return ps
	}
	return nil
}

// envPlacementChanges is the plan's line for a new rule.
func envPlacementChanges(s *State, d *Desired) []Change {
	if envPlacementEqual(s.Placement, d.Placement) {
		return nil
	}
	return []Change{{Kind: SetEnvPlacement, Old: s.Placement.String(), New: d.Placement.String()}}
}

// labelString shows labels as k=v,... in key order, "none" for none.
func labelString(labels map[string]string) string {
	if len(labels) == 0 {
		return "none"
	}
	kv := make([]string, 0, len(labels))
	for _, k := range sortedKeys(labels) {
		kv = append(kv, k+"="+labels[k])
	}
	return strings.Join(kv, ",")
}

// machineEqual compares two records of a machine field by field.
func machineEqual(a, b *Machine) bool {
	return a.Name == b.Name && a.Address == b.Address && a.Index == b.Index && a.Lost == b.Lost && a.Credential == b.Credential &&
		a.Replaced == b.Replaced && a.ID == b.ID && a.Boots == b.Boots && maps.Equal(a.Labels, b.Labels)
}
