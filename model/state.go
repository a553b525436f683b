package model

import (
	"fmt"
	"sort"
)

// Life is where an object is in its lifecycle.
type Life string

// Lives, in the order an object passes through them.
const (
	Alive Life = "alive"
	Dying Life = "dying"
	Dead  Life = "dead"
)

// Status is the workload status a unit's hook last reported.
type Status struct {
	State   string `json:"state"`
	Message string `json:"message,omitempty"`
}

// Workload status states a hook may report. "unknown" is the one Juju's
// uniter reports for a charm that has set none by the end of its start
// hook; the old-hook adapter reports it likewise.
var StatusStates = []string{"active", "blocked", "waiting", "maintenance", "unknown"}

// State is the replicated state of one environment. Maps keep JSON output
// sorted, which makes the encoded state a deterministic function of the
// commands applied.
type State struct {
	// Index is the Raft index of the last applied entry.
	Index uint64 `json:"index"`
	// EnvIndex is the index of the last operator change; apply is stamped
	// with it and divergence counts reconciles from it.
	EnvIndex  uint64              `json:"env_index"`
	Name      string              `json:"name,omitempty"`
	Charms    map[string]*Charm   `json:"charms"`
	Services  map[string]*Service `json:"services"`
	Units     map[string]*Unit    `json:"units"`
	Relations map[int]*Relation   `json:"relations"`
	Machines  map[string]*Machine `json:"machines"`
	// Secrets are the Juju secrets by id; their contents are sealed.
	Secrets      map[string]*Secret `json:"secrets,omitempty"`
	NextRelation int                `json:"next_relation"`
	// UnitNumbers keeps the next unit number of removed services, so that
	// a service deployed again under the same name never reuses one.
	UnitNumbers map[string]int `json:"unit_numbers,omitempty"`
	// NextStorage numbers storage instances, one sequence for every
	// store, as Juju's (storage.go).
	NextStorage int `json:"next_storage,omitempty"`
	// Credential is the cloud credential trusted services read; nil
	// when the environment declares none. Replaced whole, never edited in
	// place.
	Credential *Credential `json:"credential,omitempty"`
	// Placement is the environment's placement rule (envplacement.go);
	// nil places units on every machine. Replaced whole, never edited in
	// place.
	Placement *EnvPlacement `json:"placement,omitempty"`
	// NextMachine is the id the next machine to register gets
	// (Machine.ID): one sequence, never reused, as Juju's machine ids.
	NextMachine int `json:"next_machine,omitempty"`
	// UpdateStatus is the environment's update-status-hook-interval
	// (nanoseconds; 0: the server's), set by its model config.
	UpdateStatus int64 `json:"update_status,omitempty"`
	// Document is the environment's document (document.go): the
	// environment its last deploy carried, as written, kept when the
	// deploy asks (Deploy.Record) or made from the state once the
	// cluster's level records documents; nil before. Replaced whole,
	// never edited in place.
	Document *Environment `json:"document,omitempty"`
	// Auth holds hashes of the credentials the control plane accepts;
	// nil until the bootstrap node records them.
	Auth *Auth `json:"auth,omitempty"`
	// Limits are the limits in force (nil: DefaultLimits), set by
	// OpLimits; replaced whole, never edited in place.
	Limits     *Limits           `json:"limits,omitempty"`
	Requests   map[string]uint64 `json:"requests"`
	RequestLog []string          `json:"request_log"`
	// RequestDigests binds a remembered request id to its command's
	// Fingerprint, for the ids that came with one.
	RequestDigests map[string]string `json:"request_digests,omitempty"`
	// Actions are the operations asked of units (actions.go): every
	// unfinished one and the last ActionHistory finished ones of each
	// unit. ActiveActions names the unfinished ones' units by id;
	// NextAction is the last id given.
	Actions       map[int]*Action `json:"actions,omitempty"`
	ActiveActions map[int]string  `json:"active_actions,omitempty"`
	NextAction    int             `json:"next_action,omitempty"`

	// Derived, not replicated (unexported, so never encoded).
	// sealer opens secret contents for the universes (SetSealer).
	sealer Sealer
	idx    *index
}

// RelationKey names a declared relation's endpoints, "svc:ep svc:ep".
type RelationKey string

// Service is a deployed charm with its config and desired unit count.
type Service struct {
	Name        string         `json:"name"`
	Charm       string         `json:"charm"`
	Config      map[string]any `json:"config"`
	ConfigRev   uint64         `json:"config_rev"`
	Units       int            `json:"units"`
	Placement   []string       `json:"placement,omitempty"`
	Life        Life           `json:"life"`
	NextUnit    int            `json:"next_unit"`
	Leader      string         `json:"leader,omitempty"`
	LeaderRev   uint64         `json:"leader_rev"`
	LeaderData  *Bag           `json:"leader_data,omitempty"`
	CharmRev    uint64         `json:"charm_rev"`
	Index       uint64         `json:"index"`
	Subordinate bool           `json:"subordinate,omitempty"`
	// Resources are the service's resource digests by name; a deploy
	// replaces the map, never edits it.
	Resources map[string]string `json:"resources,omitempty"`
	// Storage is the environment's instance count per store; a store it
	// does not name gets its range's minimum.
	Storage map[string]int `json:"storage,omitempty"`
	// Trust lets its units read the credential (credential.go).
	Trust bool `json:"trust,omitempty"`
	// Exposed is Juju's expose, recorded and shown; it changes no
	// universe.
	Exposed bool `json:"exposed,omitempty"`
}

// Auth is the control plane's credentials, as sha256 hex of the tokens:
// the state (and its backups) never holds a usable secret.
type Auth struct {
	// Operator may do everything; control-plane nodes use it too.
	Operator string `json:"operator"`
	// Join lets an agent register its machine, and nothing else; empty
	// when joining is revoked.
	Join string `json:"join"`
	// JoinExpires, when set, is when the join token stops being accepted
	// (unix nanoseconds).
	JoinExpires int64 `json:"join_expires,omitempty"`
}

// Machine is a host whose agent has registered.
type Machine struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	Index   uint64 `json:"index"`
	// Lost is set by the control plane when the agent stops answering;
	// its units stay members but lose leadership.
	Lost bool `json:"lost,omitempty"`
	// Credential is the hash of the token this machine's agent got when
	// it registered; it covers only the units on this machine.
	Credential string `json:"credential,omitempty"`
	// Replaced is the index at which a new agent credential replaced an
	// earlier one (after `fixpoint machine reset`); status shows it, so a
	// takeover is never silent.
	Replaced uint64 `json:"credential_replaced,omitempty"`
	// ID is Juju's machine id, "0", "1", ...: the number the control
	// plane gave the machine when it first registered (State.NextMachine),
	// never reused; charms read it as JUJU_MACHINE_ID. Empty only for a
	// machine registered before ids were given, until its agent registers
	// again.
	ID string `json:"id,omitempty"`
	// Labels are what its agent registered (`fixpoint agent --label`),
	// which an environment's placement may ask for. Replaced whole by a
	// registration, never edited, so the environments' copies share it.
	Labels map[string]string `json:"labels,omitempty"`
	// Boots counts the reboots its units asked for (juju-reboot): each
	// one restarts the lifecycle of every unit on the machine (stop,
	// then start), as a reboot restarts Juju's unit agents.
	Boots int `json:"boots,omitempty"`
}

// Keys of a unit's private state (Unit.State) where the Juju adapter
// (engine/legacy) keeps what Juju records per application and a result has
// no field for: the status and the version a leader sets. Kept there, they
// survive to later hook runs, and status shows the leader's as its
// service's.
const (
	StateAppStatus  = "juju.application-status"
	StateAppVersion = "juju.application-version"
	// StateCharmPrefix starts the keys of the Juju charm state a charm
	// keeps with state-set (ops' StoredState with use_juju_for_storage):
	// its key K is kept as StateCharmPrefix+K, so that the charm's keys
	// never meet the adapter's, and its writes commit with the hook's
	// result and count towards the unit's MaxSettingsBytes.
	StateCharmPrefix = "juju.state."
)

// Unit is one instance of a service.
type Unit struct {
	Name    string `json:"name"`
	Service string `json:"service"`
	Machine string `json:"machine,omitempty"`
	Life    Life   `json:"life"`
	// Principal is set for subordinate units: the unit they attach to.
	Principal string `json:"principal,omitempty"`
	// Settings are the unit's own settings per relation id.
	Settings RelBags           `json:"settings,omitzero"`
	Status   Status            `json:"status"`
	State    map[string]string `json:"state,omitempty"`
	Ports    []string          `json:"ports,omitempty"`
	// Storage are the unit's storage instances ("data/0"), in the order
	// they were attached; replaced whole, never edited in place.
	Storage []string `json:"storage,omitempty"`
	// Reconciled is the hash of the universe last reconciled successfully.
	Reconciled string `json:"reconciled,omitempty"`
	// Seen is what that reconcile saw; legacy events are its diff.
	Seen *Seen `json:"seen,omitempty"`
	// Reconciles counts hook runs since the unit was created.
	Reconciles int `json:"reconciles"`
	// Wave counts hook runs since the last operator change.
	Wave int `json:"wave"`
	// WaveOutputs maps a universe hash reconciled in this wave to the hash
	// of what the hook returned for it.
	WaveOutputs Outputs `json:"wave_outputs,omitempty"`
	// Churn counts, per universe key, how often it changed between runs of
	// this wave; divergence messages name the top ones.
	Churn    map[string]int `json:"churn,omitempty"`
	Error    *UnitError     `json:"error,omitempty"`
	Resolved *Resolved      `json:"resolved,omitempty"`
	Created  uint64         `json:"created"`
	Index    uint64         `json:"index"`
}

// Number returns N of service/N, or -1 when the name is not of that form.
func (u *Unit) Number() int { return unitNumber(u.Name) }

// UnitError is why a unit is in the error phase.
type UnitError struct {
	// Hash is the universe that failed.
	Hash    string `json:"hash"`
	Message string `json:"message"`
	// Kind is "hook" (retried with backoff) or "diverged" (needs resolved
	// or an operator change).
	Kind     string `json:"kind"`
	Attempts int    `json:"attempts"`
	// RetryAt is when the next automatic retry is due (unix nanoseconds).
	RetryAt int64 `json:"retry_at,omitempty"`
	// Seen is what the failed universe saw, for resolved --no-retry.
	Seen *Seen `json:"seen,omitempty"`
	// Timer says the failed run was an update-status run of a settled
	// unit: its retry is one too.
	Timer bool `json:"timer,omitempty"`
}

// Resolved is an operator's request to move a unit out of error.
type Resolved struct {
	NoRetry bool   `json:"no_retry"`
	Index   uint64 `json:"index"`
}

// Relation joins one endpoint (peer) or two.
type Relation struct {
	ID        int           `json:"id"`
	Key       RelationKey   `json:"key"`
	Endpoints []RelEndpoint `json:"endpoints"`
	Interface string        `json:"interface"`
	Scope     Scope         `json:"scope"`
	Life      Life          `json:"life"`
	// App holds each service's application bag, written by its leader.
	App map[string]*Bag `json:"app,omitempty"`
	// Departed keeps the last settings of units removed from the state
	// while some unit had not yet seen them depart: Juju keeps a departed
	// unit's settings readable in its -departed hook (see departed.go).
	Departed map[string]*Bag `json:"departed,omitempty"`
	Index    uint64          `json:"index"`
}

// RelEndpoint is one side of a relation.
type RelEndpoint struct {
	Service   string `json:"service"`
	Name      string `json:"name"`
	Role      Role   `json:"role"`
	Interface string `json:"interface"`
	Scope     Scope  `json:"scope"`
	Limit     int    `json:"limit,omitempty"`
}

func (e RelEndpoint) String() string { return e.Service + ":" + e.Name }

// Ident is the relation's name as a hook of svc sees it, "endpoint:id".
func (r *Relation) Ident(svc string) string {
	if ep, ok := r.Endpoint(svc); ok {
		return fmt.Sprintf("%s:%d", ep.Name, r.ID)
	}
	return fmt.Sprintf("%s:%d", r.Endpoints[0].Name, r.ID)
}

// Endpoint returns svc's side of the relation.
func (r *Relation) Endpoint(svc string) (RelEndpoint, bool) {
	for _, e := range r.Endpoints {
		if e.Service == svc {
			return e, true
		}
	}
	return RelEndpoint{}, false
}

// Remote returns the other side of the relation for svc; for a peer
// relation that is svc itself.
func (r *Relation) Remote(svc string) (RelEndpoint, bool) {
	if len(r.Endpoints) == 1 {
		return r.Endpoints[0], r.Endpoints[0].Service == svc
	}
	for i, e := range r.Endpoints {
		if e.Service == svc {
			return r.Endpoints[1-i], true
		}
	}
	return RelEndpoint{}, false
}

// NewState returns an empty state.
func NewState() *State {
	return &State{
		Charms:    map[string]*Charm{},
		Services:  map[string]*Service{},
		Units:     map[string]*Unit{},
		Relations: map[int]*Relation{},
		Machines:  map[string]*Machine{},
		Requests:  map[string]uint64{},
	}
}

// Normalize fills nil maps after decoding, so callers never check, and
// builds the derived lookups if they are not yet (Apply calls it too):
// while the state is still its decoder's or its writer's alone. Readers
// share a state under a read lock (several at once, and the controller's
// hand-outs on every processor), and a lookup built lazily by the first
// of them would be written while others read it.
func (s *State) Normalize() {
	defer s.lookups()
	if s.Charms == nil {
		s.Charms = map[string]*Charm{}
	}
	if s.Services == nil {
		s.Services = map[string]*Service{}
	}
	if s.UnitNumbers == nil {
		s.UnitNumbers = map[string]int{}
	}
	if s.Units == nil {
		s.Units = map[string]*Unit{}
	}
	if s.Relations == nil {
		s.Relations = map[int]*Relation{}
	}
	if s.Machines == nil {
		s.Machines = map[string]*Machine{}
	}
	if s.Requests == nil {
		s.Requests = map[string]uint64{}
	}
}

// SortedUnits returns unit names in service order, then by number.
func (s *State) SortedUnits() []string {
	names := make([]string, 0, len(s.Units))
	for n := range s.Units {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return UnitLess(names[i], names[j]) })
	return names
}

// SortedRelations returns relation ids in increasing order.
func (s *State) SortedRelations() []int {
	ids := make([]int, 0, len(s.Relations))
	for id := range s.Relations {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// IsMember reports whether unit u takes part in relation r: it is not
// dead, it is placed on a registered machine (so its address is known),
// the relation is alive, and its service is an endpoint. Dying units stay
// members until their last reconcile has run and they are removed.
func (s *State) IsMember(u *Unit, r *Relation) bool {
	if u.Life == Dead || r.Life != Alive {
		return false
	}
	if _, ok := r.Endpoint(u.Service); !ok {
		return false
	}
	if u.Machine == "" {
		return false
	}
	_, ok := s.Machines[u.Machine]
	return ok
}

// RemoteMembers returns, sorted, the units unit u sees over relation r:
// members of the other side (of its own service for peers, never itself),
// and for container scope only those on u's machine.
func (s *State) RemoteMembers(u *Unit, r *Relation) []*Unit {
	remote, ok := r.Remote(u.Service)
	if !ok {
		return nil
	}
	// Joined and Shown in one walk: a container shows few of the side's
	// units, and a universe built alone need not list them all first.
	units := s.unitsOf(remote.Service)
	var out []*Unit
	if r.Scope != Container {
		out = make([]*Unit, 0, len(units))
	}
	for _, o := range units {
		if s.IsMember(o, r) && s.shows(u, o, r) {
			out = append(out, o)
		}
	}
	return out
}

// Joined returns the units of service svc that are members of relation r,
// ordered by number. Every unit on the other side sees a part of them
// (Shown): a hand-out that builds the universes of a whole service asks
// once, not once per universe.
func (s *State) Joined(r *Relation, svc string) []*Unit {
	units := s.unitsOf(svc)
	out := make([]*Unit, 0, len(units))
	for _, o := range units {
		if s.IsMember(o, r) {
			out = append(out, o)
		}
	}
	return out
}

// Shown returns the units of joined (Joined, for the side of r that u
// does not stand on, or its own for peers) that u sees: never itself, and
// for container scope only those in its container.
func (s *State) Shown(u *Unit, r *Relation, joined []*Unit) []*Unit {
	var out []*Unit
	if r.Scope != Container {
		// All of them, as a rule: every universe built calls this.
		out = make([]*Unit, 0, len(joined))
	}
	for _, o := range joined {
		if s.shows(u, o, r) {
			out = append(out, o)
		}
	}
	return out
}

// shows reports whether u sees member o of r's other side (or of its own,
// for peers).
func (s *State) shows(u, o *Unit, r *Relation) bool {
	return o.Name != u.Name && s.Sees(u, o, r)
}

// Sees reports whether viewer sees unit over the container-scoped
// relation r: they share a container.
func (s *State) Sees(viewer, unit *Unit, r *Relation) bool {
	return r.Scope != Container || s.sameContainer(viewer, unit)
}

// sameContainer holds for a principal and its subordinate, or units that
// share a machine when neither is a subordinate.
func (s *State) sameContainer(a, b *Unit) bool {
	if a.Principal != "" || b.Principal != "" {
		return a.Principal == b.Name || b.Principal == a.Name || (a.Principal != "" && a.Principal == b.Principal)
	}
	return a.Machine == b.Machine
}

func (s *State) unitsOf(svc string) []*Unit { return s.lookups().units[svc] }

// UnitsOf returns the units of a service, ordered by number.
func (s *State) UnitsOf(svc string) []*Unit { return s.unitsOf(svc) }

// RelationsOf returns the relations svc takes part in, by id.
func (s *State) RelationsOf(svc string) []*Relation { return s.lookups().relations[svc] }

// MachineID is the Juju id of the unit's machine (Machine.ID), or "".
func (s *State) MachineID(u *Unit) string {
	if m, ok := s.Machines[u.Machine]; ok {
		return m.ID
	}
	return ""
}

// MachineBoots is Machine.Boots of the unit's machine, or 0.
func (s *State) MachineBoots(u *Unit) int {
	if m, ok := s.Machines[u.Machine]; ok {
		return m.Boots
	}
	return 0
}

// rebootMachine counts a reboot of the named machine.
func (s *State) rebootMachine(name string) {
	if m, ok := s.Machines[name]; ok {
		next := *m
		next.Boots++
		s.Machines[name] = &next
	}
}

// Address is the private address of the unit's machine, or "".
func (s *State) Address(u *Unit) string {
	if m, ok := s.Machines[u.Machine]; ok {
		return m.Address
	}
	return ""
}
