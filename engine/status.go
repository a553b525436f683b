package engine

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/fixpoint/fixpoint/engine/ledger"
	"github.com/fixpoint/fixpoint/model"
)

// Status is the environment as `fixpoint status` shows it.
type Status struct {
	Index uint64 `json:"index"`
	// Generation moves with every change of what status shows, those
	// without a new entry included (a claim taken or ended, a unit found
	// unchanged); a long poll passes it to wait for the next.
	Generation  uint64 `json:"generation"`
	Environment string `json:"environment,omitempty"`
	// Applying is set while the environment a starting `up` was given is
	// not applied yet: until then nothing is converged.
	Applying  bool                      `json:"applying,omitempty"`
	Converged bool                      `json:"converged"`
	Summary   string                    `json:"summary"`
	Services  map[string]*ServiceStatus `json:"services"`
	Units     map[string]*UnitStatus    `json:"units"`
	Machines  map[string]*MachineStatus `json:"machines"`
	Relations []*RelationStatus         `json:"relations"`
	// LostMachines are the lost machines that hold units, each with
	// all its units: the fixed point leaves those out.
	LostMachines []LostMachine `json:"lost_machines,omitempty"`
	// UnreachableNodes are the control-plane nodes that stopped
	// answering the leader (set by the API from the leader's account).
	UnreachableNodes []UnreachableNode `json:"unreachable_nodes,omitempty"`
	// Cluster is the servers' builds and the cluster's feature level
	// (set by the API from the node's account).
	Cluster *model.ClusterLevel `json:"cluster,omitempty"`
}

// RelationStatus is one relation in status, as `juju status --relations`
// lists them: its endpoints ("web:db"), interface, scope and the units
// that take part in it now.
type RelationStatus struct {
	ID        int      `json:"id"`
	Endpoints []string `json:"endpoints"`
	Interface string   `json:"interface"`
	Scope     string   `json:"scope"`
	Life      string   `json:"life"`
	Members   []string `json:"members"`
}

// ServiceStatus is one service's line in status.
type ServiceStatus struct {
	Charm  string `json:"charm"`
	Life   string `json:"life"`
	Units  int    `json:"units"`
	Leader string `json:"leader,omitempty"`
	// Status is the application status the leader set (Juju's
	// `status-set --application`, ops's `self.app.status`), as `juju
	// status` shows it on the application's line; nil when none.
	Status *model.Status `json:"status,omitempty"`
	// Version is the workload version the leader set
	// (application-version-set, ops's set_workload_version).
	Version string `json:"version,omitempty"`
	// Resources are the digests of the service's resource files by name.
	Resources map[string]string `json:"resources,omitempty"`
}

// appStatus reads what an old-hook or ops leader set for its application
// from the unit's private state, where the hook tools keep it
// (model.StateAppStatus): a status that does not parse is left out.
func appStatus(u *model.Unit) (*model.Status, string) {
	if u == nil {
		return nil, ""
	}
	var st *model.Status
	if raw, ok := u.State[model.StateAppStatus]; ok {
		var s model.Status
		if json.Unmarshal([]byte(raw), &s) == nil && s.State != "" {
			st = &s
		}
	}
	return st, u.State[model.StateAppVersion]
}

// UnitStatus is one unit's line in status.
type UnitStatus struct {
	Service    string       `json:"service"`
	Machine    string       `json:"machine,omitempty"`
	Life       string       `json:"life"`
	Phase      string       `json:"phase"`
	Status     model.Status `json:"status"`
	Leader     bool         `json:"leader"`
	Reconciles int          `json:"reconciles"`
	Error      string       `json:"error,omitempty"`
	// Reason says why a pending unit is not running yet.
	Reason string   `json:"reason,omitempty"`
	Ports  []string `json:"ports,omitempty"`
	// Storage are the unit's storage instances ("data/0").
	Storage []string `json:"storage,omitempty"`
	// Agent is "lost" when the unit's machine agent stopped answering:
	// the unit keeps its relations but cannot run until it is back.
	Agent string `json:"agent,omitempty"`
	// Since is when the unit entered its phase, as this leader saw it:
	// a new leader starts counting afresh.
	Since time.Time `json:"since"`
}

// MachineStatus is one machine's line in status.
type MachineStatus struct {
	// ID is the machine's Juju id (model.Machine.ID).
	ID      string `json:"id,omitempty"`
	Address string `json:"address"`
	State   string `json:"state"`
	// CredentialReplaced is the index at which the operator reset the
	// machine's agent credential, or 0: whichever agent registered since
	// holds a new one.
	CredentialReplaced uint64 `json:"credential_replaced,omitempty"`
	// Labels are what its agent registered (fixpoint agent --label).
	Labels map[string]string `json:"labels,omitempty"`
}

// status is every unit's line in status at st: Controller.Status.
// claims are the ledger's, read with the views it brought up to st.
func (ss *statusState) status(st *model.State, claims map[string]ledger.ClaimSnapshot) *Status {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.claims = claims
	defer func() { ss.claims = nil }()
	out := ss.statusLocked(st)
	out.Generation = ss.changed.current()
	return out
}

// unitStatus is unit name's line in status at st (unitStatusLocked).
func (ss *statusState) unitStatus(st *model.State, name string, u *model.Unit, claims map[string]ledger.ClaimSnapshot) *UnitStatus {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.claims = claims
	defer func() { ss.claims = nil }()
	return ss.unitStatusLocked(st, name, u, ss.now())
}

func (ss *statusState) statusLocked(st *model.State) *Status {
	now := ss.now()
	s := &Status{
		Index:       st.Index,
		Environment: st.Name,
		Services:    map[string]*ServiceStatus{},
		Units:       map[string]*UnitStatus{},
		Machines:    map[string]*MachineStatus{},
		Relations:   []*RelationStatus{},
	}
	for name, svc := range st.Services {
		ss := &ServiceStatus{Charm: svc.Charm, Life: string(svc.Life), Units: svc.Units, Leader: svc.Leader, Resources: svc.Resources}
		ss.Status, ss.Version = appStatus(st.Units[svc.Leader])
		s.Services[name] = ss
	}
	for name, m := range st.Machines {
		state := "started"
		if m.Lost {
			state = "lost"
		}
		s.Machines[name] = &MachineStatus{ID: m.ID, Address: m.Address, State: state, CredentialReplaced: m.Replaced, Labels: m.Labels}
	}
	var counts PhaseCounts
	var lost lostUnits
	for name, u := range st.Units {
		us := ss.unitStatusLocked(st, name, u, now)
		s.Units[name] = us
		counts.count(us.Phase, us.Agent == "lost", u.Status.State == "blocked", 1)
		if us.Agent == "lost" {
			lost.add(u.Machine, name)
		}
	}
	s.LostMachines = lost.list()
	ss.prunePhasesLocked(st)
	s.Relations = relationsStatus(st)
	s.Converged = counts.converged()
	s.Summary = firstLine(st, counts)
	return s
}

// unitStatusLocked is unit name's line in status, the one rule the full
// status and a single unit's detail share. Called with mu.
func (ss *statusState) unitStatusLocked(st *model.State, name string, u *model.Unit, now time.Time) *UnitStatus {
	us := &UnitStatus{
		Service:    u.Service,
		Machine:    u.Machine,
		Life:       string(u.Life),
		Status:     u.Status,
		Leader:     st.Services[u.Service] != nil && st.Services[u.Service].Leader == name,
		Reconciles: u.Reconciles,
		Ports:      u.Ports,
		Storage:    u.Storage,
	}
	cl := ss.claims[name]
	us.Phase = ss.phaseLocked(name, u, cl, now)
	switch us.Phase {
	case Error:
		us.Error = u.Error.Message
		if u.Error.Kind == model.ErrHook && u.Error.RetryAt > 0 {
			us.Reason = fmt.Sprintf("attempt %d failed; %s", u.Error.Attempts, retryIn(time.Unix(0, u.Error.RetryAt).Sub(now)))
		}
	case Pending:
		v := ss.stale.View(name)
		switch {
		case u.Error != nil && u.Resolved != nil:
			us.Reason = "resolved: retrying"
		case u.Error != nil:
			us.Reason = "what it sees changed since its error: it runs again"
		case u.Machine == "":
			us.Reason = "no machine"
		case v != nil && !v.Member:
			us.Reason = fmt.Sprintf("waiting for machine %s to register", u.Machine)
		}
	}
	us.Since = ss.phaseSinceLocked(name, us.Phase, now, cl)
	if lostOn(st, u) {
		// Nothing can run there until the agent is back; the rest
		// of the environment can still reach its fixed point.
		us.Agent = "lost"
		us.Status = model.Status{State: "unknown", Message: "agent lost; " + us.Status.Message}
	}
	return us
}

// relationsStatus lists the relations by id with their current members.
func relationsStatus(st *model.State) []*RelationStatus {
	out := []*RelationStatus{}
	for _, r := range st.Relations {
		rs := &RelationStatus{ID: r.ID, Interface: r.Interface, Scope: string(r.Scope), Life: string(r.Life), Endpoints: []string{}, Members: []string{}}
		for _, ep := range r.Endpoints {
			rs.Endpoints = append(rs.Endpoints, ep.String())
			for _, u := range st.UnitsOf(ep.Service) {
				if st.IsMember(u, r) {
					rs.Members = append(rs.Members, u.Name)
				}
			}
		}
		out = append(out, rs)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// FirstError returns the first unit in error, by name, and its message.
func (s *Status) FirstError() (string, string) {
	var names []string
	for n, u := range s.Units {
		if u.Phase == Error {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "", ""
	}
	sort.Slice(names, func(i, j int) bool { return model.UnitLess(names[i], names[j]) })
	return names[0], s.Units[names[0]].Error
}

// SetApplying is Summary.SetApplying for the full status.
func (s *Status) SetApplying() {
	s.Applying, s.Converged, s.Summary = true, false, applyingSummary
}

// retryIn says when a failed unit runs again, d from now, at a precision
// that keeps a sub-second backoff from reading as "0s".
func retryIn(d time.Duration) string {
	switch {
	case d < 50*time.Millisecond:
		return "retry due"
	case d < 10*time.Second:
		return "retrying in " + d.Round(100*time.Millisecond).String()
	}
	return "retrying in " + d.Round(time.Second).String()
}
