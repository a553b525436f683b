// Package charmapi is the contract charm authors program against: the
// universe a reconcile hook is given, the result it returns, and Main, which
// turns a Go function into a hook executable.
package charmapi

import "strconv"

// API is the version of the universe and result this package speaks.
const API = "fixpoint/v1"

// Universe is everything a unit may see, handed to its reconcile hook.
type Universe struct {
	API     string `json:"api"`
	Unit    string `json:"unit"`
	Service string `json:"service"`
	// Charm is the content hash of the unit's charm.
	Charm string `json:"charm"`
	// Life is "alive", or "dying" for the unit's last reconcile.
	Life    string `json:"life"`
	Leader  bool   `json:"leader"`
	Machine string `json:"machine,omitempty"`
	// MachineID is the machine's Juju id ("0", "1", ...), which old
	// hooks read as JUJU_MACHINE_ID. It is not part of the universe's
	// hash: a unit never moves between machines.
	MachineID string `json:"machine_id,omitempty"`
	// Boot counts the reboots of the unit's machine that units asked for
	// (Result.Reboot): when it moves, old hooks get stop, then start.
	Boot int `json:"boot,omitempty"`
	// Address is the unit's private address.
	Address string         `json:"address,omitempty"`
	Config  map[string]any `json:"config"`
	// Resources maps each resource the environment provides the unit's
	// service to the sha256 digest of its file; resource-get gives an
	// old charm its path.
	Resources  map[string]string `json:"resources,omitempty"`
	LeaderData map[string]string `json:"leader_data"`
	// State is the unit's private map from its last result.
	State     map[string]string `json:"state"`
	Relations []Relation        `json:"relations"`
	// Leaving maps each relation the unit is leaving (one it last
	// reconciled that Relations no longer lists: the unit is dying, or
	// the relation is going) to the unit's own last settings there, by
	// ident, so that old -relation-departed and -relation-broken hooks
	// can still read them, as on Juju. It is not part of the universe's
	// hash.
	Leaving map[string]map[string]string `json:"leaving,omitempty"`
	// Storage are the unit's storage instances, in the order they were
	// attached.
	Storage []Storage `json:"storage,omitempty"`
	// Secrets are the Juju secrets the unit owns or was granted, by id.
	Secrets []Secret `json:"secrets,omitempty"`
	// Credential is the environment's cloud credential when the unit's
	// service is trusted (trust: true, Juju's deploy --trust), nil
	// otherwise: old hooks read it with credential-get. Its attributes
	// are the content of the secret it names, one of Secrets. It is not
	// part of the universe's hash.
	Credential *Credential `json:"credential,omitempty"`
	// Events are the legacy events between the universe last reconciled
	// and this one, in Juju's order.
	Events []Event `json:"events"`
	// Attempt counts tries of this same universe, from 1.
	Attempt int `json:"attempt"`
	// Env is the unit's environment: its name and uuid, what old hooks
	// read as JUJU_MODEL_NAME and JUJU_MODEL_UUID. The agent fills it in
	// from the work it is handed; it is not part of the universe's hash.
	Env *Env `json:"env,omitempty"`
	// Dir is the unit's own directory when its hook is called in-process
	// (the simulator gives every unit one), where File resolves names. It
	// is empty in a hook process, which runs in that directory, and is
	// not part of the universe's JSON.
	Dir string `json:"-"`
}

// Env names the environment a unit is in (Universe.Env).
type Env struct {
	Name string `json:"name"`
	UUID string `json:"uuid"`
}

// Relation is one relation as the unit sees it.
type Relation struct {
	// Ident is "endpoint:id", as JUJU_RELATION_ID.
	Ident         string `json:"ident"`
	ID            int    `json:"id"`
	Name          string `json:"name"`
	Interface     string `json:"interface"`
	Role          string `json:"role"`
	Scope         string `json:"scope"`
	RemoteService string `json:"remote_service"`
	// Local is this unit's own settings.
	Local map[string]string `json:"local"`
	// App is this unit's service's bag (written by its leader).
	App map[string]string `json:"app"`
	// RemoteApp is the remote service's bag.
	RemoteApp map[string]string `json:"remote_app"`
	// Units maps each remote member in scope to its settings.
	Units map[string]map[string]string `json:"units"`
	// Departed maps each member that left since the unit last reconciled
	// to its last settings, so that old -departed hooks can still read
	// them. It is not part of the universe's hash.
	Departed map[string]map[string]string `json:"departed,omitempty"`
}

// Event is one legacy hook event derived for this reconcile.
type Event struct {
	// Hook is the hook name, e.g. "db-relation-joined".
	Hook string `json:"hook"`
	// Relation is the relation ident, for relation events.
	Relation string `json:"relation,omitempty"`
	// RemoteUnit is the remote unit, for joined, changed and departed.
	RemoteUnit string `json:"remote_unit,omitempty"`
	// RemoteApp is the remote service, for relation events.
	RemoteApp string `json:"remote_app,omitempty"`
	// Departing names the unit leaving, for departed.
	Departing string `json:"departing_unit,omitempty"`
	// Storage is the storage instance ("data/0"), for storage events.
	Storage string `json:"storage,omitempty"`
	// Secret is the secret's id for secret-changed, secret-remove,
	// secret-rotate and secret-expired; SecretLabel its label as the unit
	// knows it; SecretRevision the revision of secret-remove and
	// secret-expired.
	Secret         string `json:"secret_id,omitempty"`
	SecretLabel    string `json:"secret_label,omitempty"`
	SecretRevision int    `json:"secret_revision,omitempty"`
}

// Credential is a cloud credential as Juju's credential-get describes it;
// Secret is the id of the secret holding its attributes, "" for one
// without attributes.
type Credential struct {
	Type     string `json:"type"`
	Name     string `json:"name"`
	Region   string `json:"region,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	AuthType string `json:"auth_type"`
	Secret   string `json:"secret"`
}

// Storage is one storage instance of the unit.
type Storage struct {
	// ID is "name/N", as JUJU_STORAGE_ID; N is unique in the environment.
	ID string `json:"id"`
	// Name is the store the charm declares.
	Name string `json:"name"`
	// Kind is "filesystem".
	Kind string `json:"kind"`
	// Location is the instance's directory on the unit's machine, which
	// the agent fills in; it is not part of the universe's hash.
	Location string `json:"location,omitempty"`
}

// StorageNamed returns the unit's instances of the named store.
func (u *Universe) StorageNamed(name string) []Storage {
	var out []Storage
	for _, s := range u.Storage {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// String prints an event as `fixpoint debug events` does:
// "db-relation-joined db:3 web/1".
func (e Event) String() string {
	s := e.Hook
	if e.Relation != "" {
		s += " " + e.Relation
	}
	if e.Storage != "" {
		s += " " + e.Storage
	}
	if e.Secret != "" {
		s += " " + e.Secret
		if e.SecretRevision != 0 {
			s += "/" + strconv.Itoa(e.SecretRevision)
		}
	}
	if e.RemoteUnit != "" {
		s += " " + e.RemoteUnit
	} else if e.Relation != "" && e.RemoteApp != "" && isChanged(e.Hook) {
		s += " " + e.RemoteApp
	}
	return s
}

func isChanged(hook string) bool {
	const suffix = "-relation-changed"
	return len(hook) > len(suffix) && hook[len(hook)-len(suffix):] == suffix
}

// Relation returns the first relation over the named endpoint, or nil.
func (u *Universe) Relation(endpoint string) *Relation {
	for i := range u.Relations {
		if u.Relations[i].Name == endpoint {
			return &u.Relations[i]
		}
	}
	return nil
}

// RelationsNamed returns every relation over the named endpoint.
func (u *Universe) RelationsNamed(endpoint string) []*Relation {
	var out []*Relation
	for i := range u.Relations {
		if u.Relations[i].Name == endpoint {
			out = append(out, &u.Relations[i])
		}
	}
	return out
}
