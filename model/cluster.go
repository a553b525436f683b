package model

import (
	"fmt"
	"maps"
	"sort"
	"strings"
)

// Cluster is the replicated state of a control plane: its environments.
// Each environment is a State of its own (services, units, relations,
// secrets, operations, sequences, request memory); commands that name an
// environment (Command.Env) apply to its State alone, so a unit's
// universe never reads another environment's.
//
// Machines, credentials and limits are the cluster's. The default
// environment's State is their authority, as it is in a state written
// before environments existed (a snapshot a v0.3.0 server installs reads
// the same document), and every other environment holds a copy of them
// (clusterFields) that the cluster keeps equal: a command on them applies
// to the default environment first, which judges it, then to every other
// one in name order, so that each places its units and fails its
// operations on the machines the command moved, with the engine reading
// st.Machines and st.LimitsInForce as it does for one environment.
type Cluster struct {
	// Default is the environment of a state written before environments
	// existed, and `up`'s: a command with no Env applies to it. Its name
	// is its State.Name, which its deploys set.
	Default *State
	// DefaultUUID is the default environment's uuid: given when the
	// cluster's level rises to LevelRecorded; "" before.
	DefaultUUID string
	// Envs are the other environments, by name.
	Envs map[string]*Env
	// Tokens are the environment tokens by the sha256 hex of the token
	// (tokens.go); each record is replaced whole, never edited.
	Tokens map[string]*EnvToken
}

// Env is one environment other than the default.
type Env struct {
	Name string `json:"name"`
	// UUID is stable for the environment's life, given by the proposer
	// of its env-add (Juju's model uuid, JUJU_MODEL_UUID).
	UUID string `json:"uuid"`
	// Created is the index of its env-add.
	Created uint64 `json:"created"`
	// Share, when set, caps the environment below the cluster's limits.
	Share *EnvShare `json:"share,omitempty"`
	State *State    `json:"state"`
}

// EnvShare is an environment's share of the cluster's unit and service
// limits; a zero field takes the cluster's limit.
type EnvShare struct {
	Units    int `json:"units,omitempty"`
	Services int `json:"services,omitempty"`
}

// KindEnv names environments; their names follow the service rule (a DNS
// label), since they become directory names on every machine and a label
// of every metric.
const KindEnv NameKind = "environment"

// DefaultEnvironments caps the environments of a cluster, the default one
// included, while the limits set none (Limits.Environments); applying a
// machine's change costs one apply per environment.
const DefaultEnvironments = 1000

// CeilingEnvironments is the most Limits.Environments may be raised to.
const CeilingEnvironments = 10_000

// NewCluster returns a cluster of one empty default environment.
func NewCluster() *Cluster { return ClusterOf(NewState()) }

// ClusterOf returns a cluster whose default environment is st: how a
// state written before environments existed opens.
func ClusterOf(st *State) *Cluster {
	st.Normalize()
	return &Cluster{Default: st, Envs: map[string]*Env{}}
}

// Normalize fills nil maps after decoding, every environment's included.
func (c *Cluster) Normalize() {
	if c.Default == nil {
		c.Default = NewState()
	}
	c.Default.Normalize()
	if c.Envs == nil {
		c.Envs = map[string]*Env{}
	}
	for _, e := range c.Envs {
		if e.State == nil {
			e.State = NewState()
		}
		e.State.Normalize()
	}
}

// SyncCopies makes every other environment's copy of the cluster's
// fields the default environment's: a document holds them once, in the
// default environment (raftstore's snapshots), and a reader fills the
// copies.
func (c *Cluster) SyncCopies() {
	for _, e := range c.Envs {
		e.State.copyClusterFields(c.Default)
	}
}

// WithoutCopies returns a shallow copy of s without the cluster's fields,
// for a document that holds them once (SyncCopies). It shares the rest of
// s, which it must not outlive changes to.
func (s *State) WithoutCopies() *State {
	cp := *s
	cp.Machines, cp.NextMachine, cp.Auth, cp.Limits = nil, 0, nil, nil
	return &cp
}

// Names returns the other environments' names, sorted: the order every
// fan-out applies in.
func (c *Cluster) Names() []string { return sortedKeys(c.Envs) }

// Lookup returns the State of the named environment: "" or the default
// environment's name is the default one.
func (c *Cluster) Lookup(name string) (*State, bool) {
	if name == "" || name == c.Default.Name {
		return c.Default, true
	}
	if e, ok := c.Envs[name]; ok {
		return e.State, true
	}
	return nil, false
}

// State returns the named environment's State, or an error that lists
// the environments and says how to make one.
func (c *Cluster) State(name string) (*State, error) {
	if st, ok := c.Lookup(name); ok {
		return st, nil
	}
	return nil, c.noEnv(name)
}

// noEnv is the error for an environment that does not exist.
func (c *Cluster) noEnv(name string) error {
	return fmt.Errorf("environment %s does not exist (environments: %s); create it with `fixpoint env add %s`", Quote(name, 72), listOr(c.listed()), name)
}

// listed names every environment for messages, the default one first.
func (c *Cluster) listed() []string {
	out := []string{c.defaultLabel()}
	return append(out, c.Names()...)
}

// defaultLabel is how messages name the default environment.
func (c *Cluster) defaultLabel() string {
	if c.Default.Name == "" {
		return "the default environment"
	}
	return c.Default.Name + " (default)"
}

// Count is how many environments the cluster holds, the default one
// included.
func (c *Cluster) Count() int { return 1 + len(c.Envs) }

// SetIndex moves every environment's index to the last entry applied:
// each environment's State.Index is the store's index, which its readers
// pass to WaitIndex. It is O(environments) per entry.
func (c *Cluster) SetIndex(index uint64) {
	c.Default.Index = index
	for _, e := range c.Envs {
		e.State.Index = index
	}
}

// SetSealer gives every environment the cluster key.
func (c *Cluster) SetSealer(s Sealer) {
	c.Default.SetSealer(s)
	for _, e := range c.Envs {
		e.State.SetSealer(s)
	}
}

// NumberMachines gives machine ids at the level's rise (State.
// NumberMachines) in every environment's copy alike.
func (c *Cluster) NumberMachines(index uint64) {
	c.Default.NumberMachines(index)
	for _, name := range c.Names() {
		c.Envs[name].State.copyClusterFields(c.Default)
	}
}

// AdoptDocuments gives every environment applied before documents were
// kept its document (State.AdoptDocument).
func (c *Cluster) AdoptDocuments() {
	c.Default.AdoptDocument()
	for _, name := range c.Names() {
		c.Envs[name].State.AdoptDocument()
	}
}

// Clone copies every environment (State.Clone) for a snapshot.
func (c *Cluster) Clone() *Cluster {
	out := &Cluster{Default: c.Default.Clone(), DefaultUUID: c.DefaultUUID, Envs: make(map[string]*Env, len(c.Envs)), Tokens: maps.Clone(c.Tokens)}
	for name, e := range c.Envs {
		cp := *e
		cp.State = e.State.Clone()
		out.Envs[name] = &cp
	}
	return out
}

// copyClusterFields makes s's copy of the cluster's fields from's: the
// machines (each its own record, as liveness edits them in place), the
// next machine id, the credentials and the limits (both replaced whole,
// never edited, so shared).
func (s *State) copyClusterFields(from *State) {
	s.Machines = cloneObjects(from.Machines)
	if s.Machines == nil {
		s.Machines = map[string]*Machine{}
	}
	s.NextMachine = from.NextMachine
	s.Auth = from.Auth
	s.Limits = from.Limits
}

// ClusterFieldsDiffer says which of the cluster's fields s's copy holds
// otherwise than from's, "" when none: the fan-out keeps them equal, and
// tests hold it to that.
func (s *State) ClusterFieldsDiffer(from *State) string {
	var out []string
	if s.NextMachine != from.NextMachine {
		out = append(out, "next_machine")
	}
	if (s.Auth == nil) != (from.Auth == nil) || s.Auth != nil && *s.Auth != *from.Auth {
		out = append(out, "auth")
	}
	if s.LimitsInForce() != from.LimitsInForce() {
		out = append(out, "limits")
	}
	if len(s.Machines) != len(from.Machines) {
		out = append(out, "machines")
	} else {
		for name, m := range from.Machines {
			if o, ok := s.Machines[name]; !ok || !machineEqual(o, m) {
				out = append(out, "machines."+name)
			}
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// EnvironmentsInForce is the cap on environments the limits set, or
// DefaultEnvironments.
func (l Limits) EnvironmentsInForce() int {
	if l.Environments == 0 {
		return DefaultEnvironments
	}
	return l.Environments
}

// CheckUUID checks an environment uuid: RFC 4122 text, lower-case hex.
func CheckUUID(s string) error {
	bad := func() error {
		return fmt.Errorf("environment uuid %s is not a uuid (8-4-4-4-12 lower-case hex digits)", Quote(s, 40))
	}
	if len(s) != 36 {
		return bad()
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return bad()
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return bad()
			}
		}
	}
	return nil
}
