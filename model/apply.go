package model

import (
	"fmt"
	"maps"
	"sort"
	"strings"
)

// DivergeBound is how many reconciles of one unit since the last operator
// change are allowed before the unit is declared diverging.
const DivergeBound = 32

// requestMemory bounds the request ids remembered for deduplication.
const requestMemory = 8192

// Apply carries out c at log index. It is deterministic: it reads nothing
// but s and c. A refused command returns an error and leaves s unchanged
// but for Index.
func (s *State) Apply(index uint64, c *Command) (*Response, error) {
	return (&applying{State: s, now: c.Time, secretTime: secretTime(c)}).apply(index, c)
}

// applying is one command being applied: the state, and the scratch its
// rules keep while they run, which is not replicated and lives no longer
// than the command.
type applying struct {
	*State
	// now is the command's Time; pending the events its rules derived so
	// far (events.go), which Apply hands back in its Response.
	now     int64
	pending []Event
	// secretTime is the command's Time when it records secrets' times
	// (Command.SecretTimes), else 0.
	secretTime int64
	// gate, when set, judges a command the cluster routes here before
	// anything changes (Cluster.Apply): a duplicate is answered first.
	gate func(c *Command, desired *Desired) error
}

// secretTime is the time c records on the secrets it changes, 0 for
// none.
func secretTime(c *Command) int64 {
	if c.SecretTimes {
		return c.Time
	}
	return 0
}

func (s *applying) apply(index uint64, c *Command) (*Response, error) {
	s.Normalize()
	s.Index = index
	desired, err := c.Check()
	if err != nil {
		return nil, err
	}
	if at, dup, err := s.CheckRequest(c); err != nil {
		return nil, err
	} else if dup {
		return &Response{Index: at, Duplicate: true, Action: s.enqueuedBy(c)}, nil
	}
	if s.gate != nil {
		if err := s.gate(c, desired); err != nil {
			return nil, err
		}
	}
	resp := &Response{Index: index}
	t := &Touched{Index: index}
	sc := &scope{}
	switch c.Op {
	case OpDeploy:
		name, diverged := s.Name, s.diverged()
		resp.Changes, err = s.deploy(index, c.Deploy, desired)
		t.All, sc = true, everything()
		if err == nil && s.Name == name && configOnly(resp.Changes, t) {
			// The deploy cleared their divergence: their own records.
			t.All, t.Units = false, append(t.Units, diverged...)
		}
	case OpMachine:
		var changed bool
		changed, err = s.registerMachine(index, c.Machine)
		if err == nil {
			s.failRunningOn(c.Time, c.Machine.Name, "the agent of machine "+c.Machine.Name+" started again while the operation ran; it is not run twice")
		}
		if changed {
			t.All, sc = true, everything()
		}
	case OpResults:
		for i := range c.Results {
			if why := s.applyResult(index, &c.Results[i], t, sc); why != "" {
				resp.Skipped = append(resp.Skipped, why)
			}
		}
	case OpResolve:
		var marked []*Unit
		marked, err = s.resolve(index, c.Resolve)
		for _, u := range marked {
			t.Units = append(t.Units, u.Name)
			if _, kept := s.Units[u.Name]; !kept {
				// resolved --no-retry ended a dying unit: its service may
				// now finish dying too.
				t.All = true
				sc.addService(s.State, u.Service)
			} else if s.unsettled(u) {
				// resolved --no-retry may let go of a dying relation.
				sc.addService(s.State, u.Service)
			}
		}
		if c.Resolve.Unit == "" {
			for i, u := range marked {
				if i == MaxListedResolved {
					resp.ResolvedMore = len(marked) - i
					break
				}
				resp.Resolved = append(resp.Resolved, u.Name)
			}
		}
	case OpLiveness:
		for _, name := range sortedKeys(s.Machines) {
			m := s.Machines[name]
			if lost := c.Liveness.Lost[name]; lost != m.Lost {
				if lost {
					s.failRunningOn(c.Time, name, "the agent of machine "+name+" was lost while the operation ran")
				}
				m.Lost = lost
				m.Index = index
				t.All, sc = true, everything()
				s.noteLiveness(m)
			}
		}
	case OpLogs:
		return nil, fmt.Errorf("log lines are kept beside the state, not in it: raftstore applies them")
	case OpEnvAdd, OpEnvRemove, OpTokenCreate, OpTokenRevoke:
		return nil, fmt.Errorf("%s changes the cluster, not one environment: Cluster.Apply applies it", c.Op)
	case OpAuth:
		if _, err := s.checkAuth(c.Auth); err != nil {
			return nil, err
		}
		if s.Auth == nil {
			s.Auth = &Auth{Operator: c.Auth.Operator, Join: c.Auth.Join}
		}
		t.All = true
	case OpReset:
		err = s.resetMachine(index, c.Reset)
		if err == nil {
			s.failRunningOn(c.Time, c.Reset.Name, "machine "+c.Reset.Name+" was reset while the operation ran")
		}
		t.All, sc = true, everything()
	case OpJoin:
		err = s.setJoin(c.Join)
		t.All = true
	case OpEnqueue:
		resp.Action, err = s.enqueueAction(c.Time, c.Enqueue)
		t.Actions = true
	case OpStart:
		err = s.startAction(c.Time, c.StartAction)
		t.Actions = true
	case OpFinish:
		var skipped string
		if skipped, err = s.finishAction(index, c.Time, c.Finish, t); skipped != "" {
			resp.Skipped = append(resp.Skipped, skipped)
		}
		t.Actions = true
	case OpClusterKey:
		if moved := s.reseal(c.ClusterKey); len(moved) > 0 {
			t.Secrets = moved
		}
	case OpSecretDue:
		var skipped []string
		skipped, t.Secrets = s.applySecretDue(index, c.Time, c.SecretDue)
		resp.Skipped = append(resp.Skipped, skipped...)
	case OpLimits:
		var noop bool
		if noop, err = s.checkSetLimits(c.Limits); err == nil && !noop {
			l := *c.Limits
			s.Limits = &l
		}
	}
	if err != nil {
		return nil, err
	}
	if s.settle(index, sc) {
		t.All = true
	}
	if t.All {
		s.failOrphanActions(c.Time)
	}
	resp.touched = []envTouched{{t: t}}
	s.remember(c, index)
	resp.events = s.pending
	return resp, nil
}

// configOnly reports whether changes only set services' config, and then
// says in t what that touched: those services' units, and new waves. A
// config change to one service of many then re-hashes its units only;
// anything else a deploy can do (units, relations, charms, placement)
// still says everything may have changed.
func configOnly(changes []Change, t *Touched) bool {
	if len(changes) == 0 {
		return false
	}
	for _, c := range changes {
		if c.Kind != SetConfig {
			return false
		}
	}
	for _, c := range changes {
		t.Config = append(t.Config, c.Service)
	}
	t.Waves = true
	return true
}

// deploy makes desired, which check resolved from d, the environment.
func (s *applying) deploy(index uint64, d *Deploy, desired *Desired) ([]Change, error) {
	changes, err := s.planDeploy(d, desired)
	if err != nil {
		return nil, err
	}
	for _, ds := range desired.Services {
		if _, ok := s.Charms[ds.Charm]; !ok {
			s.Charms[ds.Charm] = d.Charms[ds.Charm]
		}
	}
	relByKey := map[RelationKey]*Relation{}
	for _, r := range s.Relations {
		if r.Life == Alive {
			relByKey[r.Key] = r
		}
	}
	for _, c := range changes {
		switch c.Kind {
		case AddService:
			ds := desired.Services[c.Service]
			svc, ok := s.Services[c.Service]
			if !ok {
				// Numbers are never reused, even by a service of the
				// same name deployed again after removal.
				svc = &Service{Name: c.Service, NextUnit: s.UnitNumbers[c.Service]}
				s.Services[c.Service] = svc
			}
			svc.Charm, svc.CharmRev = ds.Charm, index
			svc.Config, svc.ConfigRev = ds.Config, index
			svc.Units, svc.Placement, svc.Subordinate = ds.Units, ds.Placement, ds.Subordinate
			svc.Resources = ds.Resources
			svc.Storage = ds.Storage
			svc.Trust, svc.Exposed = ds.Trust, ds.Expose
			svc.Life, svc.Index = Alive, index
		case UpgradeCharm:
			svc := s.Services[c.Service]
			svc.Charm, svc.CharmRev, svc.Index = c.New, index, index
			svc.Subordinate = desired.Services[c.Service].Subordinate
			// The new charm's stores attach as Juju's upgrade does.
			s.ensureServiceStorage(svc)
		case SetConfig:
			svc := s.Services[c.Service]
			svc.Config, svc.ConfigRev, svc.Index = desired.Services[c.Service].Config, index, index
		case SetResource:
			svc := s.Services[c.Service]
			svc.Resources, svc.Index = desired.Services[c.Service].Resources, index
		case SetStorage:
			svc := s.Services[c.Service]
			svc.Storage, svc.Index = desired.Services[c.Service].Storage, index
			s.ensureServiceStorage(svc)
		case SetPlacement:
			svc := s.Services[c.Service]
			svc.Placement, svc.Index = desired.Services[c.Service].Placement, index
		case SetTrust:
			svc := s.Services[c.Service]
			svc.Trust, svc.Index = desired.Services[c.Service].Trust, index
		case SetExpose:
			svc := s.Services[c.Service]
			svc.Exposed, svc.Index = desired.Services[c.Service].Expose, index
		case SetCredential:
			s.Credential = desired.Credential
		case SetEnvPlacement:
			s.Placement = desired.Placement
		case SetModelConfig:
			s.UpdateStatus = int64(desired.UpdateStatus)
		case AddUnits:
			svc := s.Services[c.Service]
			svc.Units = desired.Services[c.Service].Units
			added := make([]*Unit, 0, len(c.Units))
			for _, name := range c.Units {
				added = append(added, &Unit{Name: name, Service: svc.Name, Life: Alive, Created: index, Index: index, Status: Status{State: "waiting", Message: "installing"}})
				svc.NextUnit++
			}
			s.addUnits(svc.Name, added)
		case RemoveUnits:
			s.Services[c.Service].Units = desired.Services[c.Service].Units
			for _, name := range c.Units {
				s.killUnit(index, s.Units[name])
			}
		case RemoveService:
			svc := s.Services[c.Service]
			svc.Life, svc.Units, svc.Index = Dying, 0, index
			for _, u := range s.UnitsOf(svc.Name) {
				s.killUnit(index, u)
			}
			for _, r := range s.RelationsOf(svc.Name) {
				if r.Life == Alive {
					r.Life, r.Index = Dying, index
				}
			}
		case AddRelation:
			dr := desired.Relations[RelationKey(c.Key)]
			r := &Relation{ID: s.NextRelation, Key: dr.Key, Endpoints: dr.Endpoints, Interface: dr.Interface, Scope: dr.Scope, Life: Alive, Index: index}
			s.addRelation(r)
			s.NextRelation++
		case RemoveRelation:
			r := relByKey[RelationKey(c.Key)]
			r.Life, r.Index = Dying, index
		case AddSecret, ReviseSecret, DescribeSecret, GrantSecret, RevokeSecret, RemoveSecret:
			s.applyUserSecret(index, c, desired)
		}
	}
	s.Name = desired.Name
	s.EnvIndex = index
	s.keepDocument(d)
	for name := range s.stats().waving {
		if u := s.Units[name]; u != nil && u.Error != nil && u.Error.Kind == ErrDiverged {
			u.Error, u.Resolved = nil, nil
		}
	}
	s.newWaves()
	return changes, nil
}

func (s *applying) killUnit(index uint64, u *Unit) {
	if u == nil || u.Life != Alive {
		return
	}
	s.changeUnit(u, func() { u.Life, u.Index = Dying, index })
	s.note(u.Name, EventDying, false, "dying: removed from the environment; its hook runs once more to let go")
}

// Error kinds.
const (
	ErrHook     = "hook"
	ErrDiverged = "diverged"
)

// applyResult applies one reconcile result; it returns why it skipped it,
// or "".
func (s *applying) applyResult(index uint64, r *Result, t *Touched, sc *scope) string {
	u, ok := s.Units[r.Unit]
	if !ok {
		return fmt.Sprintf("%s: unit no longer exists", r.Unit)
	}
	if r.Error != "" && !r.Timer && u.Error == nil && u.Reconciled == r.Hash {
		// The run started before resolved --no-retry accepted its
		// universe; its failure is of a universe that already counts as
		// reconciled, and must not put the unit back in error.
		return fmt.Sprintf("%s: failure of universe %s, already accepted as reconciled", r.Unit, ShortHash(r.Hash))
	}
	t.Units = append(t.Units, u.Name)
	s.wavingUnit(u)
	wasError, oldStatus := u.Error, u.Status
	defer func() { s.noteResult(u, r, wasError, oldStatus) }()
	u.Index = index
	u.Reconciles++
	if !r.Timer {
		// A timer run is not a step towards a fixed point: it does not
		// count towards the divergence bound.
		u.Wave++
	}
	if r.Error != "" {
		attempts := 1
		if u.Error != nil && u.Error.Hash == r.Hash {
			attempts = u.Error.Attempts + 1
		}
		u.Error = &UnitError{Hash: r.Hash, Message: r.Error, Kind: ErrHook, Attempts: attempts, RetryAt: r.RetryAt, Seen: r.Seen, Timer: r.Timer}
		u.Resolved = nil
		return ""
	}
	var skipped []string
	if refused := s.applyWrites(index, u, r, t); refused != "" {
		skipped = append(skipped, refused)
	}
	u.Reconciled = r.Hash
	prevSeen := u.Seen
	u.Seen = r.Seen
	s.pruneDeparted(prevSeen)
	u.Error, u.Resolved = nil, nil
	if s.unsettled(u) {
		sc.addService(s.State, u.Service)
	}
	if lastRun(u, r.Seen) {
		s.removeUnit(u)
		t.All = true
		return strings.Join(skipped, "; ")
	}
	if len(r.Churn) > 0 {
		// A fresh map: a snapshot being written may share the old one.
		u.Churn = maps.Clone(u.Churn)
		if u.Churn == nil {
			u.Churn = map[string]int{}
		}
		for _, k := range r.Churn {
			u.Churn[k]++
		}
	}
	prev, seenBefore := u.WaveOutputs.Get(r.Hash)
	u.WaveOutputs = u.WaveOutputs.With(r.Hash, r.Output)
	switch {
	case r.Timer:
		// update-status on an unchanged universe may rightly return
		// something else (an ops charm's deferred event handled at last,
		// a workload's health): what it returned is the universe's
		// output from now on, and no sign of divergence.
	case seenBefore && prev != r.Output:
		u.Error = &UnitError{Hash: r.Hash, Kind: ErrDiverged, Attempts: 1,
			Message: fmt.Sprintf("diverged: its universe came back to one it reconciled in this wave, but the hook returned something else; keys that keep changing: %s", u.churnSummary())}
	case u.Wave > DivergeBound:
		u.Error = &UnitError{Hash: r.Hash, Kind: ErrDiverged, Attempts: 1,
			Message: fmt.Sprintf("diverged: reconciled %d times since the last operator change (bound %d); keys that keep changing: %s", u.Wave, DivergeBound, u.churnSummary())}
	}
	return strings.Join(skipped, "; ")
}

// applyWrites applies what a hook or an action of u wrote (its relation
// bags, the leader's, its status, state and ports, the storage it added
// and its secrets' changes) and returns the writes refused, joined. It is
// the one place both apply them: an action writes what a hook may.
func (s *applying) applyWrites(index uint64, u *Unit, r *Result, t *Touched) string {
	svc := s.Services[u.Service]
	var skipped []string
	stillLeader := svc != nil && svc.Leader == u.Name
	for _, id := range sortedKeys(r.Settings) {
		rel, ok := s.Relations[id]
		if !ok || !s.IsMember(u, rel) {
			skipped = append(skipped, fmt.Sprintf("relation %d is gone", id))
			continue
		}
		if b := updateBag(u.Settings.Get(id), r.Settings[id], index); b != u.Settings.Get(id) {
			u.Settings = u.Settings.With(id, b)
			t.Settings = append(t.Settings, UnitBag{u.Name, id})
		}
	}
	if (len(r.App) > 0 || r.LeaderData != nil) && (!r.Leader || !stillLeader) {
		skipped = append(skipped, "leader-only settings refused: the unit is not the leader any more")
	} else {
		for _, id := range sortedKeys(r.App) {
			rel, ok := s.Relations[id]
			if !ok || !s.IsMember(u, rel) {
				skipped = append(skipped, fmt.Sprintf("relation %d is gone", id))
				continue
			}
			if b := updateBag(rel.App[u.Service], r.App[id], index); b != rel.App[u.Service] {
				rel.App = withEntry(rel.App, u.Service, b)
				t.Apps = append(t.Apps, id)
			}
		}
		if r.LeaderData != nil {
			if b := updateBag(svc.LeaderData, r.LeaderData, index); b != svc.LeaderData {
				svc.LeaderData = b
				t.LeaderData = append(t.LeaderData, svc.Name)
			}
		}
	}
	if r.Status != nil {
		u.Status = *r.Status
	}
	if r.State != nil {
		u.State = nilIfEmpty(r.State)
	}
	if r.Ports != nil {
		u.Ports = append([]string(nil), r.Ports...)
		sort.Strings(u.Ports)
	}
	if len(r.StorageAdd) > 0 && u.Life == Alive {
		had := len(u.Storage)
		skipped = append(skipped, s.addStorage(u, r.StorageAdd)...)
		if len(u.Storage) != had {
			t.Storage = append(t.Storage, u.Name)
		}
	}
	if r.Reboot && u.Life == Alive {
		// Every universe on the machine moves: a machine change.
		s.rebootMachine(u.Machine)
		t.All = true
	}
	if len(r.Secrets) > 0 {
		moved := map[string]bool{}
		skipped = append(skipped, s.applySecrets(index, u, r.Leader && stillLeader, r.Secrets, moved)...)
		t.Secrets = append(t.Secrets, sortedKeys(moved)...)
	}
	return strings.Join(skipped, "; ")
}

// churnSummary names the keys that changed most often, most first.
func (u *Unit) churnSummary() string {
	if len(u.Churn) == 0 {
		return "(none seen: the hook's own output changes each run, e.g. a timestamp or random value)"
	}
	keys := sortedKeys(u.Churn)
	sort.SliceStable(keys, func(i, j int) bool { return u.Churn[keys[i]] > u.Churn[keys[j]] })
	if len(keys) > 5 {
		keys = keys[:5]
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s (%d changes)", k, u.Churn[k])
	}
	return strings.Join(parts, ", ")
}

// updateBag returns b if it holds data's pairs already, else a new bag of
// them at index: the state replaces a bag whole, never edits one.
func updateBag(b *Bag, data map[string]string, index uint64) *Bag {
	if b != nil && b.EqualMap(data) {
		return b
	}
	return NewBag(data, index)
}

func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// lastRun reports whether a run of u that saw seen was its last: a dying
// unit whose run saw it dying has nothing left to reconcile.
func lastRun(u *Unit, seen *Seen) bool {
	return u.Life == Dying && seen != nil && seen.Life == Dying
}

func (s *applying) removeUnit(u *Unit) {
	s.note(u.Name, EventRemoved, false, "removed")
	s.dropUnit(u)
	s.dropSecretsOf(u)
	s.keepDeparted(u)
	if svc := s.Services[u.Service]; svc != nil && svc.Leader == u.Name {
		svc.Leader = ""
	}
}

func (s *applying) resolve(index uint64, r *ResolveUnit) (marked []*Unit, err error) {
	if noop, err := s.checkResolve(r); noop || err != nil {
		return nil, err
	}
	if r.Unit != "" {
		marked = []*Unit{s.Units[r.Unit]}
	} else {
		marked = s.resolveBatch(r)
	}
	for _, u := range marked {
		s.resolveUnit(index, u, r.NoRetry)
	}
	return marked, nil
}

// resolveUnit marks u, in error, resolved: retried now, or with noRetry
// its failed universe taken as reconciled.
func (s *applying) resolveUnit(index uint64, u *Unit, noRetry bool) {
	u.Index = index
	if noRetry {
		s.note(u.Name, EventResolved, false, "resolved --no-retry: the failed universe %s counts as reconciled", ShortHash(u.Error.Hash))
	} else {
		s.note(u.Name, EventResolved, false, "resolved: retrying now")
	}
	if noRetry {
		// The failed run counts as done, exactly as a success would.
		u.Reconciled = u.Error.Hash
		seen := u.Error.Seen
		if seen != nil {
			prev := u.Seen
			u.Seen = seen
			s.pruneDeparted(prev)
		}
		u.Error = nil
		if lastRun(u, seen) {
			s.removeUnit(u)
		}
		return
	}
	u.Resolved = &Resolved{NoRetry: noRetry, Index: index}
	e := *u.Error // a fresh record: a snapshot being written may share it
	e.RetryAt = 0
	u.Error = &e
	if u.Error.Kind == ErrDiverged {
		u.Wave, u.WaveOutputs, u.Churn = 0, nil, nil
	}
}

func retryMode(noRetry bool) string {
	if noRetry {
		return "--no-retry"
	}
	return "retry"
}
