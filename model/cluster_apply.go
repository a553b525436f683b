package model

import (
	"fmt"
	"strings"
)

// EnvAdd makes an environment other than the default one.
type EnvAdd struct {
	Name string `json:"name"`
	// UUID is given by the proposer, once per request: a retry of the
	// request sends the same one.
	UUID  string    `json:"uuid"`
	Share *EnvShare `json:"share,omitempty"`
}

// EnvRemove drops an environment that holds nothing any more: its units
// have run their dying hooks (an empty deploy to it first) and are gone.
// Force drops it while units remain, as long as none of them is on a
// machine whose agent could still run its dying hooks: every one is on a
// lost machine (or on none), as Juju's `destroy-model --force` leaves
// such units without their hooks.
type EnvRemove struct {
	Name  string `json:"name"`
	Force bool   `json:"force,omitempty"`
}

// perEnv are the ops that apply to one environment's State; the others
// apply to the cluster's fields in every environment (fan-out), or to the
// cluster itself (env-add, env-remove), and name no environment.
var perEnv = map[Op]bool{
	OpDeploy: true, OpResults: true, OpResolve: true, OpEnqueue: true,
	OpStart: true, OpFinish: true, OpSecretDue: true,
}

// clusterWide are the ops on the cluster's machines, credentials, limits
// and key: applied to the default environment, then to every other one.
var clusterWide = map[Op]bool{
	OpMachine: true, OpLiveness: true, OpAuth: true, OpReset: true,
	OpJoin: true, OpLimits: true, OpClusterKey: true,
}

// ofCluster are the ops on the cluster itself: its environments and their
// tokens.
var ofCluster = map[Op]bool{OpEnvAdd: true, OpEnvRemove: true, OpTokenCreate: true, OpTokenRevoke: true}

// PerEnv reports whether op applies to one environment (Command.Env).
func PerEnv(op Op) bool { return perEnv[op] }

// checkEnv refuses an environment named where the op applies to the
// cluster, and a name no environment could have.
func (c *Command) checkEnv() error {
	if c.Env == "" {
		return nil
	}
	if !perEnv[c.Op] {
		return fmt.Errorf("%s command names environment %s, but it applies to the whole cluster (its machines, credentials, limits or environments): send it without an environment", Quote(string(c.Op), 24), Quote(c.Env, 72))
	}
	if len(c.Env) > MaxNameLen || strings.ContainsFunc(c.Env, isControl) {
		return fmt.Errorf("environment name %s: at most %d printable bytes", Quote(c.Env, 24), MaxNameLen)
	}
	return nil
}

func (a *EnvAdd) check() error {
	if err := CheckName(KindEnv, a.Name); err != nil {
		return err
	}
	if err := CheckUUID(a.UUID); err != nil {
		return fmt.Errorf("environment %s: %w", a.Name, err)
	}
	if s := a.Share; s != nil {
		if s.Units < 0 || s.Units > CeilingLimits.Units || s.Services < 0 || s.Services > CeilingLimits.Services {
			return fmt.Errorf("environment %s: share of %d units and %d services; each must be between 0 (the cluster's limit) and its ceiling (%d units, %d services)", a.Name, s.Units, s.Services, CeilingLimits.Units, CeilingLimits.Services)
		}
	}
	return nil
}

func (r *EnvRemove) check() error { return CheckName(KindEnv, r.Name) }

// Apply carries out c at log index in the environment it names, in every
// environment for the cluster's fields, or on the cluster for env-add and
// env-remove. It is deterministic, as State.Apply is; a refused command
// changes nothing but the indexes.
func (c *Cluster) Apply(index uint64, cmd *Command) (*Response, error) {
	c.SetIndex(index)
	switch {
	case ofCluster[cmd.Op]:
		return c.applyEnvOp(index, cmd)
	case clusterWide[cmd.Op]:
		return c.fanOut(index, cmd)
	}
	st, err := c.State(cmd.Env)
	if err != nil {
		return nil, err
	}
	resp, err := (&applying{State: st, now: cmd.Time, secretTime: secretTime(cmd), gate: c.gateFor(st)}).apply(index, cmd)
	if err == nil && st != c.Default {
		stampEnv(resp.events, st.Name)
		for i := range resp.touched {
			resp.touched[i].env = st.Name
		}
	}
	return resp, err
}

// stampEnv names env in events of an environment other than the default.
func stampEnv(events []Event, env string) {
	for i := range events {
		events[i].Env = env
	}
}

// fanOut applies a command on the cluster's fields to the default
// environment, which judges it and remembers its request, then to every
// other environment in name order. Their copies are equal, so each judges
// it alike; were one to refuse, it takes the default's copy rather than
// keep another.
func (c *Cluster) fanOut(index uint64, cmd *Command) (*Response, error) {
	resp, err := c.Default.Apply(index, cmd)
	if err != nil || resp.Duplicate || len(c.Envs) == 0 {
		return resp, err
	}
	each := *cmd
	each.RequestID, each.Digest = "", ""
	for _, name := range c.Names() {
		st := c.Envs[name].State
		r, err := st.Apply(index, &each)
		if err != nil {
			st.copyClusterFields(c.Default)
			continue
		}
		stampEnv(r.events, name)
		resp.events = append(resp.events, r.events...)
		if t := r.Touched(""); t != nil {
			resp.touched = append(resp.touched, envTouched{env: name, t: t})
		}
	}
	return resp, nil
}

// applyEnvOp makes or drops an environment, or keeps its tokens. Its
// request is remembered in the default environment, as the cluster's
// other requests are.
func (c *Cluster) applyEnvOp(index uint64, cmd *Command) (*Response, error) {
	if _, err := cmd.Check(); err != nil {
		return nil, err
	}
	if at, dup, err := c.Default.CheckRequest(cmd); err != nil {
		return nil, err
	} else if dup {
		return &Response{Index: at, Duplicate: true}, nil
	}
	noop, err := c.admitEnvOp(cmd)
	if err != nil {
		return nil, err
	}
	if !noop {
		switch cmd.Op {
		case OpEnvAdd:
			a := cmd.EnvAdd
			st := NewState()
			st.copyClusterFields(c.Default)
			st.Name, st.Index = a.Name, index
			st.SetSealer(c.Default.sealer)
			st.Normalize()
			var share *EnvShare
			if a.Share != nil {
				cp := *a.Share
				share = &cp
			}
			c.Envs[a.Name] = &Env{Name: a.Name, UUID: a.UUID, Created: index, Share: share, State: st}
		case OpEnvRemove:
			delete(c.Envs, cmd.EnvRemove.Name)
			c.dropTokensOf(cmd.EnvRemove.Name)
		case OpTokenCreate, OpTokenRevoke:
			c.applyToken(index, cmd)
		}
	}
	c.Default.remember(cmd, index)
	return &Response{Index: index}, nil
}

// admitEnvOp judges an op of the cluster itself: refused, a no-op, or to
// apply.
func (c *Cluster) admitEnvOp(cmd *Command) (noop bool, err error) {
	switch cmd.Op {
	case OpEnvRemove:
		return false, c.checkEnvRemove(cmd.EnvRemove)
	case OpTokenCreate:
		return c.checkTokenCreate(cmd.TokenCreate)
	case OpTokenRevoke:
		return false, c.checkTokenRevoke(cmd.TokenRevoke)
	}
	return c.checkEnvAdd(cmd.EnvAdd)
}

// checkEnvAdd refuses a name or uuid taken, and an environment past the
// cluster's limit; adding one that exists as asked is a no-op.
func (c *Cluster) checkEnvAdd(a *EnvAdd) (noop bool, err error) {
	if e, ok := c.Envs[a.Name]; ok {
		if e.UUID == a.UUID && shareOf(e.Share) == shareOf(a.Share) {
			return true, nil
		}
		return false, fmt.Errorf("environment %s exists (uuid %s); pick another name, or remove it first (`fixpoint env remove %s`)", a.Name, e.UUID, a.Name)
	}
	if a.Name == c.Default.Name {
		return false, fmt.Errorf("environment %s exists: it is the default environment's name; pick another name", a.Name)
	}
	if a.UUID == c.DefaultUUID {
		return false, fmt.Errorf("environment %s: uuid %s is the default environment's; send a new uuid", a.Name, a.UUID)
	}
	for _, name := range c.Names() {
		if c.Envs[name].UUID == a.UUID {
			return false, fmt.Errorf("environment %s: uuid %s is environment %s's; send a new uuid", a.Name, a.UUID, name)
		}
	}
	if most := c.Default.LimitsInForce().EnvironmentsInForce(); c.Count() >= most {
		return false, fmt.Errorf("environment %s: the cluster holds %d environments, the default one included, its limit (raise it with --max-environments on the servers); remove environments no longer used (`fixpoint env remove NAME`)", a.Name, c.Count())
	}
	return false, nil
}

func shareOf(s *EnvShare) EnvShare {
	if s == nil {
		return EnvShare{}
	}
	return *s
}

// checkEnvRemove refuses dropping the default environment, one that does
// not exist, and one that still holds units, services or operations.
func (c *Cluster) checkEnvRemove(r *EnvRemove) error {
	e, ok := c.Envs[r.Name]
	if !ok {
		if r.Name == c.Default.Name {
			return fmt.Errorf("environment %s is the default environment, which is never dropped; deploy an empty environment to it to remove what it runs", r.Name)
		}
		return c.noEnv(r.Name)
	}
	st := e.State
	if r.Force {
		return forceable(r.Name, st)
	}
	if len(st.Units) > 0 || len(st.Services) > 0 || len(st.ActiveActions) > 0 {
		return fmt.Errorf("environment %s still holds %d units, %d services and %d unfinished operations: deploy it empty and wait until its units have run their dying hooks and are gone (`fixpoint env remove %s` does both)", r.Name, len(st.Units), len(st.Services), len(st.ActiveActions), r.Name)
	}
	return nil
}

// forceable refuses a forced drop of environment name while one of its
// units is on a machine that is not lost, or an operation of such a unit
// is unfinished: that agent still runs the unit's dying hooks.
func forceable(name string, st *State) error {
	onLive := func(unit string) bool {
		u := st.Units[unit]
		if u == nil || u.Machine == "" {
			return false
		}
		m := st.Machines[u.Machine]
		return m != nil && !m.Lost
	}
	live, ops := 0, 0
	first := ""
	for unit := range st.Units {
		if onLive(unit) {
			live++
			if first == "" || unit < first {
				first = unit
			}
		}
	}
	for _, unit := range st.ActiveActions {
		if onLive(unit) {
			ops++
		}
	}
	if live+ops > 0 {
		return fmt.Errorf("environment %s: %d units (%s first) and %d unfinished operations are on machines whose agents answer; --force drops only units on lost machines: deploy it empty and wait for their dying hooks (`fixpoint env remove %s` without --force)", name, live, first, ops, name)
	}
	return nil
}

// gateFor is what the cluster checks of a command routed to st before
// the environment applies it: a deploy's name and the cluster's limits.
func (c *Cluster) gateFor(st *State) func(*Command, *Desired) error {
	return func(cmd *Command, desired *Desired) error {
		if cmd.Op != OpDeploy || desired == nil {
			return nil
		}
		return c.checkDeployIn(st, desired)
	}
}

// checkDeployIn refuses a deploy to st whose file names another
// environment, or that would take st past its share or the cluster past
// its limits. With the default environment alone it refuses nothing the
// environment's own limits let through.
func (c *Cluster) checkDeployIn(st *State, d *Desired) error {
	var share *EnvShare
	if st == c.Default {
		if _, ok := c.Envs[d.Name]; ok {
			return fmt.Errorf("the environment file names environment %s, which is not the default environment: apply it to that environment (-e %s)", Quote(d.Name, 72), d.Name)
		}
	} else {
		if d.Name != st.Name {
			return fmt.Errorf("the environment file names environment %s but is applied to environment %s: change its name, or apply it to the environment it names", Quote(d.Name, 72), Quote(st.Name, 72))
		}
		share = c.Envs[st.Name].Share
	}
	l := c.Default.LimitsInForce()
	_, units := l.units(d)
	var ps Problems
	if share != nil && share.Units > 0 && units > share.Units {
		ps.add([]string{"services"}, "the services ask for more than %d units, subordinate units included; environment %s's share is %d units", share.Units, st.Name, share.Units)
	}
	if share != nil && share.Services > 0 && len(d.Services) > share.Services {
		ps.add([]string{"services"}, "%d services; environment %s's share is %d services", len(d.Services), st.Name, share.Services)
	}
	if len(c.Envs) > 0 {
		units, services := units, len(d.Services)
		for _, o := range c.States() {
			if o != st {
				units = addCapped(units, len(o.Units), l.Units+1)
				services = addCapped(services, len(o.Services), l.Services+1)
			}
		}
		if units > l.Units {
			ps.add([]string{"services"}, "with the units of the cluster's other environments, more than %d units; the cluster's limit is %d (%s)", l.Units, l.Units, raise("max-units"))
		}
		if services > l.Services {
			ps.add([]string{"services"}, "with the services of the cluster's other environments, more than %d services; the cluster's limit is %d (%s)", l.Services, l.Services, raise("max-services"))
		}
	}
	if len(ps) > 0 {
		return ps
	}
	return nil
}

// States returns every environment's State, the default one first, then by
// name.
func (c *Cluster) States() []*State {
	out := make([]*State, 0, c.Count())
	out = append(out, c.Default)
	for _, name := range c.Names() {
		out = append(out, c.Envs[name].State)
	}
	return out
}

// Admit tells, from c alone, what applying cmd as the next entry would do
// (State.Admit, routed as Apply routes it).
func (c *Cluster) Admit(cmd *Command, desired *Desired) (noop bool, err error) {
	switch {
	case ofCluster[cmd.Op]:
		return c.admitEnvOp(cmd)
	case clusterWide[cmd.Op]:
		return c.Default.Admit(cmd, desired)
	}
	st, err := c.State(cmd.Env)
	if err != nil {
		return false, err
	}
	if err := c.gateFor(st)(cmd, desired); err != nil {
		return false, err
	}
	return st.Admit(cmd, desired)
}

// CheckRequest is State.CheckRequest against the request memory cmd is
// remembered in: its environment's for a per-environment command, the
// default environment's for the cluster's.
func (c *Cluster) CheckRequest(cmd *Command) (at uint64, dup bool, err error) {
	if perEnv[cmd.Op] {
		st, ok := c.Lookup(cmd.Env)
		if !ok {
			return 0, false, nil
		}
		return st.CheckRequest(cmd)
	}
	return c.Default.CheckRequest(cmd)
}
