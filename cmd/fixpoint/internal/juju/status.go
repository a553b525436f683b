// Package juju maps fixpoint's state and status onto the JSON and YAML
// shapes of the Juju 3.6 commands (juju status, show-unit, secrets,
// show-secret, config, show-model, models, version), as jubilant and
// pytest-operator parse them. It does no I/O: the fixpoint binary's juju
// front reads the control plane through its api.Client and hands the
// answers here. A Juju model is a fixpoint environment; a Juju
// application a service.
package juju

import (
	"sort"
	"strings"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
)

// sinceLayout is how Juju's status prints a since time (its
// common.FormatTime without --iso-time).
const sinceLayout = "02 Jan 2006 15:04:05Z07:00"

// StatusInfo is Juju's statusInfoContents: a status value, its message
// and when it was set.
type StatusInfo struct {
	Current string `json:"current,omitempty" yaml:"current,omitempty"`
	Message string `json:"message,omitempty" yaml:"message,omitempty"`
	Reason  string `json:"reason,omitempty" yaml:"reason,omitempty"`
	Since   string `json:"since,omitempty" yaml:"since,omitempty"`
	Version string `json:"version,omitempty" yaml:"version,omitempty"`
	Life    string `json:"life,omitempty" yaml:"life,omitempty"`
}

// Status is `juju status --format json`: the model, its machines and its
// applications. Offers, remote applications and storage are left out:
// fixpoint has no cross-model relations, and its storage is listed by
// fixpoint status.
type Status struct {
	Model        ModelStatus            `json:"model" yaml:"model"`
	Machines     map[string]Machine     `json:"machines" yaml:"machines"`
	Applications map[string]Application `json:"applications" yaml:"applications"`
	Controller   *ControllerStatus      `json:"controller,omitempty" yaml:"controller,omitempty"`
}

// ModelStatus is status's model section.
type ModelStatus struct {
	Name        string     `json:"name" yaml:"name"`
	Type        string     `json:"type" yaml:"type"`
	Controller  string     `json:"controller" yaml:"controller"`
	Cloud       string     `json:"cloud" yaml:"cloud"`
	Region      string     `json:"region,omitempty" yaml:"region,omitempty"`
	Version     string     `json:"version" yaml:"version"`
	ModelStatus StatusInfo `json:"model-status" yaml:"model-status"`
	SLA         string     `json:"sla,omitempty" yaml:"sla,omitempty"`
}

// ControllerStatus is status's controller section: the time it was read.
type ControllerStatus struct {
	Timestamp string `json:"timestamp,omitempty" yaml:"timestamp,omitempty"`
}

// Machine is one machine of status, keyed by its Juju id.
type Machine struct {
	JujuStatus         StatusInfo `json:"juju-status" yaml:"juju-status"`
	Hostname           string     `json:"hostname,omitempty" yaml:"hostname,omitempty"`
	DNSName            string     `json:"dns-name,omitempty" yaml:"dns-name,omitempty"`
	IPAddresses        []string   `json:"ip-addresses,omitempty" yaml:"ip-addresses,omitempty"`
	InstanceID         string     `json:"instance-id,omitempty" yaml:"instance-id,omitempty"`
	DisplayName        string     `json:"display-name,omitempty" yaml:"display-name,omitempty"`
	MachineStatus      StatusInfo `json:"machine-status" yaml:"machine-status"`
	ModificationStatus StatusInfo `json:"modification-status" yaml:"modification-status"`
}

// Application is one application of status.
type Application struct {
	Charm         string                           `json:"charm" yaml:"charm"`
	CharmOrigin   string                           `json:"charm-origin" yaml:"charm-origin"`
	CharmName     string                           `json:"charm-name" yaml:"charm-name"`
	CharmRev      int                              `json:"charm-rev" yaml:"charm-rev"`
	CharmChannel  string                           `json:"charm-channel,omitempty" yaml:"charm-channel,omitempty"`
	Exposed       bool                             `json:"exposed" yaml:"exposed"`
	Life          string                           `json:"life,omitempty" yaml:"life,omitempty"`
	Status        StatusInfo                       `json:"application-status" yaml:"application-status"`
	Relations     map[string][]ApplicationRelation `json:"relations,omitempty" yaml:"relations,omitempty"`
	SubordinateTo []string                         `json:"subordinate-to,omitempty" yaml:"subordinate-to,omitempty"`
	Units         map[string]Unit                  `json:"units,omitempty" yaml:"units,omitempty"`
	Version       string                           `json:"version,omitempty" yaml:"version,omitempty"`
}

// ApplicationRelation is one relation of an application's endpoint.
type ApplicationRelation struct {
	RelatedApplication string `json:"related-application" yaml:"related-application"`
	Interface          string `json:"interface" yaml:"interface"`
	Scope              string `json:"scope" yaml:"scope"`
}

// Unit is one unit of status; a subordinate unit sits under its
// principal's Subordinates.
type Unit struct {
	WorkloadStatus StatusInfo      `json:"workload-status" yaml:"workload-status"`
	JujuStatus     StatusInfo      `json:"juju-status" yaml:"juju-status"`
	Leader         bool            `json:"leader,omitempty" yaml:"leader,omitempty"`
	Machine        string          `json:"machine,omitempty" yaml:"machine,omitempty"`
	OpenPorts      []string        `json:"open-ports,omitempty" yaml:"open-ports,omitempty"`
	PublicAddress  string          `json:"public-address,omitempty" yaml:"public-address,omitempty"`
	Subordinates   map[string]Unit `json:"subordinates,omitempty" yaml:"subordinates,omitempty"`
}

// Source is what the juju front read from the control plane: the
// replicated state and fixpoint's status of the same environment, and
// the names Juju shows that fixpoint has no record of.
type Source struct {
	State  *model.State
	Status *engine.Status
	// Controller is the controller's name: the login context's.
	Controller string
	// Now is when status was read; Loc the zone its times print in.
	Now time.Time
	Loc *time.Location
}

// Model type, cloud and agent version as every fixpoint model shows them.
const (
	// ModelType is Juju's machine model type: units run on machines.
	ModelType = "iaas"
	// Cloud is the cloud a fixpoint model is on: the machines whose
	// agents registered, wherever they are.
	Cloud = "fixpoint"
)

// FullStatus is `juju status` of src.
func FullStatus(src *Source) *Status {
	st, fs := src.State, src.Status
	out := &Status{
		Model: ModelStatus{Name: st.Name, Type: ModelType, Controller: src.Controller, Cloud: Cloud, Version: Version,
			ModelStatus: StatusInfo{Current: "available"}, SLA: "unsupported"},
		Machines:     map[string]Machine{},
		Applications: map[string]Application{},
		Controller:   &ControllerStatus{Timestamp: src.Now.In(src.Loc).Format("15:04:05Z07:00")},
	}
	for _, m := range st.Machines {
		out.Machines[machineKey(m)] = machineStatus(m)
	}
	units := map[string]Unit{}
	for name, u := range st.Units {
		units[name] = unitStatus(src, name, u, fs.Units[name])
	}
	for name, svc := range st.Services {
		out.Applications[name] = application(src, name, svc, units)
	}
	return out
}

// machineKey is the key status lists machine m under: its Juju id, or its
// name while it has none (registered before ids were given).
func machineKey(m *model.Machine) string {
	if m.ID != "" {
		return m.ID
	}
	return m.Name
}

// machineStatus is m as Juju shows a started machine: fixpoint's machine
// name is its hostname and instance id, its address its DNS name.
func machineStatus(m *model.Machine) Machine {
	js := StatusInfo{Current: "started", Version: Version}
	if m.Lost {
		js = StatusInfo{Current: "down", Message: "agent is not communicating with the server", Version: Version}
	}
	out := Machine{JujuStatus: js, Hostname: m.Name, DNSName: m.Address, InstanceID: m.Name, DisplayName: m.Name,
		MachineStatus: StatusInfo{Current: "running"}, ModificationStatus: StatusInfo{Current: "idle"}}
	if m.Address != "" {
		out.IPAddresses = []string{m.Address}
	}
	return out
}

// unitStatus is one unit's entry, from its line in fixpoint's status (nil
// when the status was read before the unit was added).
func unitStatus(src *Source, name string, u *model.Unit, us *engine.UnitStatus) Unit {
	st := src.State
	out := Unit{Machine: st.MachineID(u), PublicAddress: st.Address(u), OpenPorts: Ports(u.Ports)}
	if u.Principal != "" {
		out.Machine = ""
	}
	if us == nil {
		us = &engine.UnitStatus{Service: u.Service, Machine: u.Machine, Life: string(u.Life), Phase: engine.Pending, Status: u.Status}
	}
	out.Leader = us.Leader
	out.WorkloadStatus, out.JujuStatus = UnitStatuses(u, us, src.Loc)
	return out
}

// UnitStatuses are a unit's workload and agent statuses as Juju reports
// them, from its line in fixpoint's status:
//
//   - a unit without a registered machine is waiting for its machine, its
//     agent allocating;
//   - a hook that failed is the workload's error, its message the
//     failure, and the agent idle (as juju status shows a unit in error);
//   - a unit whose agent is lost has a lost agent;
//   - a unit whose hook runs has an executing agent, otherwise an idle
//     one;
//   - a workload that set no status is unknown once its hooks ran, and
//     waiting for its agent before that.
func UnitStatuses(u *model.Unit, us *engine.UnitStatus, loc *time.Location) (workload, agent StatusInfo) {
	since := ""
	if !us.Since.IsZero() {
		since = us.Since.In(loc).Format(sinceLayout)
	}
	workload = StatusInfo{Current: us.Status.State, Message: us.Status.Message, Since: since}
	agent = StatusInfo{Current: "idle", Since: since, Version: Version}
	if workload.Current == "" {
		workload.Current = "unknown"
		if us.Reconciles == 0 {
			workload = StatusInfo{Current: "waiting", Message: "agent initialising", Since: since}
		}
	}
	switch {
	case us.Agent == "lost":
		agent.Current, agent.Message = "lost", "agent lost, see 'juju debug-log --include "+u.Name+"'"
	case us.Phase == engine.Error:
		workload = StatusInfo{Current: "error", Message: us.Error, Since: since}
	case us.Phase == engine.Pending && us.Machine == "" && u.Principal == "":
		workload = StatusInfo{Current: "waiting", Message: "waiting for machine", Since: since}
		agent.Current = "allocating"
	case us.Phase == engine.Pending && strings.HasPrefix(us.Reason, "waiting for machine"):
		workload = StatusInfo{Current: "waiting", Message: "waiting for machine", Since: since}
		agent.Current = "allocating"
	case us.Phase == engine.Reconciling:
		agent.Current = "executing"
	}
	if u.Life != model.Alive {
		workload.Life, agent.Life = string(u.Life), string(u.Life)
	}
	return workload, agent
}

// Ports are a unit's open ports as Juju lists them ("80/tcp"): those a
// charm opened for chosen endpoints once each, in order.
func Ports(ports []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range ports {
		port, _, _ := model.SplitPortEndpoint(p)
		if !seen[port] {
			seen[port] = true
			out = append(out, port)
		}
	}
	return out
}

// application is service name's entry: its charm, the status its leader
// set or Juju derives from its units', its relations and its units (a
// subordinate's under their principals').
func application(src *Source, name string, svc *model.Service, units map[string]Unit) Application {
	st := src.State
	charmName := svc.Name
	if ch := st.Charms[svc.Charm]; ch != nil && ch.Meta.Name != "" {
		charmName = ch.Meta.Name
	}
	out := Application{Charm: "local:" + charmName + "-0", CharmOrigin: "local", CharmName: charmName, CharmRev: 0, Exposed: svc.Exposed}
	if st.Document != nil {
		if spec, ok := st.Document.Services[name]; ok && spec.Channel != "" {
			// Deployed by name from a channel, as from Charmhub: Juju
			// names such a charm by its name alone.
			out.Charm, out.CharmOrigin, out.CharmChannel = charmName, "charmhub", spec.Channel
			if spec.Revision != nil {
				out.CharmRev = *spec.Revision
			}
		}
	}
	if svc.Life != model.Alive {
		out.Life = string(svc.Life)
	}
	var fss *engine.ServiceStatus
	if src.Status != nil {
		fss = src.Status.Services[name]
	}
	var workloads []StatusInfo
	for _, u := range st.UnitsOf(name) {
		us, ok := units[u.Name]
		if !ok {
			continue
		}
		workloads = append(workloads, us.WorkloadStatus)
		if u.Principal != "" {
			continue
		}
		if out.Units == nil {
			out.Units = map[string]Unit{}
		}
		out.Units[u.Name] = withSubordinates(st, u, us, units)
	}
	out.Status = DeriveStatus(workloads)
	if fss != nil && fss.Status != nil && fss.Status.State != "" && fss.Status.State != "unknown" {
		out.Status = StatusInfo{Current: fss.Status.State, Message: fss.Status.Message, Since: units[svc.Leader].WorkloadStatus.Since}
	}
	if fss != nil {
		out.Version = fss.Version
	}
	principals := map[string]bool{}
	for _, r := range st.RelationsOf(name) {
		ep, _ := r.Endpoint(name)
		remote, _ := r.Remote(name)
		if out.Relations == nil {
			out.Relations = map[string][]ApplicationRelation{}
		}
		out.Relations[ep.Name] = append(out.Relations[ep.Name], ApplicationRelation{RelatedApplication: remote.Service, Interface: r.Interface, Scope: string(r.Scope)})
		if svc.Subordinate && r.Scope == model.Container && remote.Service != name {
			if rs := st.Services[remote.Service]; rs != nil && !rs.Subordinate {
				principals[remote.Service] = true
			}
		}
	}
	for ep := range out.Relations {
		sort.Slice(out.Relations[ep], func(i, j int) bool {
			return out.Relations[ep][i].RelatedApplication < out.Relations[ep][j].RelatedApplication
		})
	}
	for p := range principals {
		out.SubordinateTo = append(out.SubordinateTo, p)
	}
	sort.Strings(out.SubordinateTo)
	return out
}

// withSubordinates is principal unit u's entry with the subordinate units
// attached to it.
func withSubordinates(st *model.State, u *model.Unit, us Unit, units map[string]Unit) Unit {
	for name, other := range st.Units {
		if other.Principal != u.Name {
			continue
		}
		if us.Subordinates == nil {
			us.Subordinates = map[string]Unit{}
		}
		us.Subordinates[name] = units[name]
	}
	return us
}

// severity ranks workload statuses as Juju's status.DeriveStatus does: the
// application shows its most severe unit's.
var severity = map[string]int{"error": 100, "blocked": 90, "maintenance": 80, "waiting": 70, "active": 60, "terminated": 50, "unknown": 40}

// DeriveStatus is an application's status from its units' workload
// statuses, for an application whose leader set none: the most severe,
// the first of equals; unknown without units.
func DeriveStatus(units []StatusInfo) StatusInfo {
	out := StatusInfo{Current: "unknown"}
	for _, u := range units {
		if severity[u.Current] > severity[out.Current] {
			out = StatusInfo{Current: u.Current, Message: u.Message, Since: u.Since}
		}
	}
	return out
}
