package model

import (
	"context"
	"fmt"
	"maps"
	"sort"
)

// Admit tells, from s alone, what applying c as the next entry would do:
// err when the FSM would refuse it, noop when it would change nothing. The
// API asks before proposing, so that a command refused on state the node
// can read never grows the log; the FSM applies the same rules again and
// stays the judge. desired is a deploy's resolved environment
// (Command.Check). Ops only the engine proposes (results, liveness) are
// admitted.
func (s *State) Admit(c *Command, desired *Desired) (noop bool, err error) {
	switch c.Op {
	case OpDeploy:
		_, err = s.planDeploy(c.Deploy, desired)
		return false, err
	case OpMachine:
		noop, err = s.checkRegister(c.Machine)
		// A registration is an agent that started again: the operations
		// its previous run left running are to be failed.
		return noop && !s.runningOn(c.Machine.Name), err
	case OpResolve:
		return s.checkResolve(c.Resolve)
	case OpReset:
		return s.checkReset(c.Reset)
	case OpJoin:
		return s.checkJoin(c.Join)
	case OpLimits:
		return s.checkSetLimits(c.Limits)
	case OpEnqueue:
		_, err = s.CheckEnqueue(c.Enqueue)
		return false, err
	case OpStart:
		_, err = s.checkStart(c.StartAction)
		return false, err
	case OpFinish:
		_, err = s.checkFinish(c.Finish)
		return false, err
	case OpAuth:
		return s.checkAuth(c.Auth)
	}
	return false, nil
}

// Replica is what AdmitOn needs of a node: its applied state, and a way
// to bring it up to everything committed before the call.
type Replica interface {
	View(fn func(*State) error) error
	Linearize(ctx context.Context) error
}

// AdmitOn asks r's applied state what c would do (CheckRequest, then
// Admit), so that a command refused on state the node can read, or one
// that would change nothing, never grows the log. It returns the
// refusal, or the answer to give for a no-op; neither nil means propose.
// A node's copy may lag the log, so a refusal or a no-op is confirmed on
// a linearizable read first; where that read fails, the command is to be
// proposed and the FSM judges it.
func AdmitOn(ctx context.Context, r Replica, c *Command, desired *Desired) (*Response, error) {
	view := func(fn func(judge)) { _ = r.View(func(st *State) error { fn(st); return nil }) }
	return admitOn(ctx, r.Linearize, view, c, desired)
}

// ClusterReplica is what AdmitClusterOn needs of a node: its applied
// cluster, and a way to bring it up to everything committed.
type ClusterReplica interface {
	ViewCluster(fn func(*Cluster) error) error
	Linearize(ctx context.Context) error
}

// AdmitClusterOn is AdmitOn for a command of any environment, or of the
// cluster (Cluster.Admit).
func AdmitClusterOn(ctx context.Context, r ClusterReplica, c *Command, desired *Desired) (*Response, error) {
	view := func(fn func(judge)) { _ = r.ViewCluster(func(cl *Cluster) error { fn(cl); return nil }) }
	return admitOn(ctx, r.Linearize, view, c, desired)
}

// judge is what admitOn asks: a State, or a Cluster that routes.
type judge interface {
	CheckRequest(c *Command) (at uint64, dup bool, err error)
	Admit(c *Command, desired *Desired) (noop bool, err error)
	appliedIndex() uint64
}

func (s *State) appliedIndex() uint64   { return s.Index }
func (c *Cluster) appliedIndex() uint64 { return c.Default.Index }

// admitOn is AdmitOn over any judge.
func admitOn(ctx context.Context, linearize func(context.Context) error, view func(func(judge)), c *Command, desired *Desired) (*Response, error) {
	check := func() (noop *Response, err error) {
		view(func(j judge) {
			var dup, same bool
			if _, dup, err = j.CheckRequest(c); err != nil || dup {
				// A retry is answered by the FSM, with the index the
				// first send was applied at.
				return
			}
			if same, err = j.Admit(c, desired); same && err == nil {
				noop = &Response{Index: j.appliedIndex()}
			}
		})
		return noop, err
	}
	if noop, err := check(); noop == nil && err == nil {
		return nil, nil
	}
	if err := linearize(ctx); err != nil {
		return nil, nil
	}
	return check()
}

// CheckLimits refuses a desired environment over the limits in force, or
// one that with the units still dying would hold more units than they
// allow. It allocates nothing per unit: plans and deploys run it before
// they name units.
func (s *State) CheckLimits(desired *Desired) error {
	l := s.LimitsInForce()
	if ps := l.Check(desired); len(ps) > 0 {
		return ps
	}
	return s.checkDying(desired, l)
}

// planDeploy checks d, which resolved to desired, against s and returns
// what deploying it changes.
func (s *State) planDeploy(d *Deploy, desired *Desired) ([]Change, error) {
	if d.BaseIndex != 0 && d.BaseIndex != s.EnvIndex {
		return nil, movedError(d.BaseIndex, s.EnvIndex)
	}
	if err := s.CheckLimits(desired); err != nil {
		return nil, err
	}
	if err := checkRemoveUnits(s, desired); err != nil {
		return nil, err
	}
	if err := checkEnvPlacement(s, desired); err != nil {
		return nil, err
	}
	changes := Plan(s, desired)
	if err := CheckChanges(s, desired, changes); err != nil {
		return nil, err
	}
	if err := checkUserSecrets(s, desired, changes); err != nil {
		return nil, err
	}
	return changes, nil
}

// checkRegister refuses a registration that would take a machine over or
// register one machine past the limit; an unchanged renewal is a no-op.
func (s *State) checkRegister(m *RegisterMachine) (noop bool, err error) {
	cur, ok := s.Machines[m.Name]
	if ok && cur.Credential != "" && m.Renew != cur.Credential {
		return false, fmt.Errorf("register machine %s: %w; only its current agent renews it. If that agent lost its credential (its data dir's %s), run `fixpoint machine reset %s` and start it again", m.Name, ErrTakeover, AgentCredentialFile, m.Name)
	}
	if l := s.LimitsInForce(); !ok && len(s.Machines) >= l.Machines {
		return false, fmt.Errorf("register machine %s: %d machines are registered, the limit (%s); forget machines no longer used (`fixpoint machine forget M`)", m.Name, len(s.Machines), raise("max-machines"))
	}
	cred := m.Credential
	if cred == "" && ok {
		cred = cur.Credential
	}
	// A machine without a Juju id gets one when its registration asks.
	return ok && cur.Address == m.Address && !cur.Lost && cred == cur.Credential && (cur.ID != "" || !m.Number) && maps.Equal(cur.Labels, m.Labels), nil
}

// checkResolve refuses `resolved` of a unit that does not exist, is not
// in error, or is already marked resolved the other way; marking it again
// the same way is a no-op. A resolve of a service refuses only a service
// that does not exist; of its units, and of all units, it takes those
// resolvable (resolvable) and skips the others, and is a no-op when none
// is.
func (s *State) checkResolve(r *ResolveUnit) (noop bool, err error) {
	if r.Unit == "" {
		if _, ok := s.Services[r.Service]; !ok && !r.All {
			return false, fmt.Errorf("service %s does not exist (services: %s)", r.Service, listOr(sortedKeys(s.Services)))
		}
		return len(s.resolveBatch(r)) == 0, nil
	}
	u, ok := s.Units[r.Unit]
	if !ok {
		return false, fmt.Errorf("unit %s does not exist", r.Unit)
	}
	return resolvable(u, r.NoRetry)
}

// resolvable is the rule for one unit: refused when it is not in error or
// is marked resolved the other way; a no-op when it is marked the same way.
func resolvable(u *Unit, noRetry bool) (noop bool, err error) {
	if u.Error == nil {
		return false, fmt.Errorf("unit %s is not in error; there is nothing to resolve", u.Name)
	}
	if u.Resolved != nil {
		if u.Resolved.NoRetry != noRetry {
			return false, fmt.Errorf("unit %s is already marked resolved (%s); it cannot also be marked %s", u.Name, retryMode(u.Resolved.NoRetry), retryMode(noRetry))
		}
		return true, nil
	}
	return false, nil
}

// resolveBatch returns, by name, the units a resolve of a service or of
// all units marks: those of its scope that resolvable admits and that are
// not marked already.
func (s *State) resolveBatch(r *ResolveUnit) []*Unit {
	var out []*Unit
	for _, u := range s.Units {
		if !r.All && u.Service != r.Service {
			continue
		}
		if noop, err := resolvable(u, r.NoRetry); err == nil && !noop {
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool { return UnitLess(out[i].Name, out[j].Name) })
	return out
}

// checkReset refuses a reset of a machine that is not registered; a reset
// of one that holds no credential is a no-op.
func (s *State) checkReset(r *ResetMachine) (noop bool, err error) {
	m, ok := s.Machines[r.Name]
	if !ok {
		return false, fmt.Errorf("machine %s is not registered (machines: %s)", r.Name, listOr(sortedKeys(s.Machines)))
	}
	return !r.Forget && m.Credential == "", nil
}

// checkJoin refuses a join token before the credentials are set or equal
// to the operator's; setting the one in force again is a no-op.
func (s *State) checkJoin(j *JoinToken) (noop bool, err error) {
	if s.Auth == nil {
		return false, fmt.Errorf("the control plane has no credentials yet: it is still bootstrapping")
	}
	if j.Hash != "" && j.Hash == s.Auth.Operator {
		return false, fmt.Errorf("the join token may not equal the operator token")
	}
	return s.Auth.Join == j.Hash && s.Auth.JoinExpires == j.Expires, nil
}

// checkAuth refuses credentials other than those set; setting the ones
// set again is a no-op. The first credentials are the bootstrap node's.
func (s *State) checkAuth(a *Auth) (noop bool, err error) {
	if s.Auth == nil {
		return false, nil
	}
	if s.Auth.Operator != a.Operator || s.Auth.Join != a.Join {
		return false, fmt.Errorf("the control plane's credentials are already set")
	}
	return true, nil
}
