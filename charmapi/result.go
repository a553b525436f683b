package charmapi

// Result is what a reconcile hook returns. Listed relations have their
// bags replaced whole (a bag left out of a listed relation is untouched);
// unlisted relations are left as they are.
type Result struct {
	Relations map[string]RelationResult `json:"relations,omitempty"`
	// LeaderData replaces the service's leader data; leader only.
	LeaderData map[string]string `json:"leader_data,omitzero"`
	Status     *Status           `json:"status,omitempty"`
	// State replaces the unit's private map when set.
	State map[string]string `json:"state,omitzero"`
	// Ports replaces the unit's open ports when set ("80/tcp", "53/udp").
	Ports []string `json:"ports,omitzero"`
	// StorageAdd asks for more instances per store, as Juju's
	// storage-add: {"data": 1} attaches one more data instance, within
	// the charm's range.
	StorageAdd map[string]int `json:"storage_add,omitzero"`
	// Secrets are changes to Juju secrets, applied in order.
	Secrets []SecretChange `json:"secrets,omitempty"`
	// Reboot restarts the lifecycle of every unit on this unit's machine
	// once the result is applied, as Juju's juju-reboot: each unit's next
	// universe has a higher boot, and an old-hook charm runs stop, then
	// start.
	Reboot bool `json:"reboot,omitzero"`
}

// RelationResult is a unit's writes to one relation.
type RelationResult struct {
	// Local replaces this unit's settings when set.
	Local map[string]string `json:"local,omitzero"`
	// App replaces the service's bag when set; leader only.
	App map[string]string `json:"app,omitzero"`
}

// Status is a workload status: active, blocked, waiting or maintenance.
type Status struct {
	State   string `json:"state"`
	Message string `json:"message,omitempty"`
}

// NewResult returns an empty result ready for Set calls.
func NewResult() *Result { return &Result{Relations: map[string]RelationResult{}} }

// SetLocal sets this unit's settings in relation ident.
func (r *Result) SetLocal(ident string, settings map[string]string) *Result {
	if r.Relations == nil {
		r.Relations = map[string]RelationResult{}
	}
	rr := r.Relations[ident]
	if settings == nil {
		settings = map[string]string{}
	}
	rr.Local = settings
	r.Relations[ident] = rr
	return r
}

// SetApp sets the service's bag in relation ident (leader only).
func (r *Result) SetApp(ident string, settings map[string]string) *Result {
	if r.Relations == nil {
		r.Relations = map[string]RelationResult{}
	}
	rr := r.Relations[ident]
	if settings == nil {
		settings = map[string]string{}
	}
	rr.App = settings
	r.Relations[ident] = rr
	return r
}

// Active, Blocked, Waiting and Maintenance set the workload status.
func (r *Result) Active(msg string) *Result      { r.Status = &Status{"active", msg}; return r }
func (r *Result) Blocked(msg string) *Result     { r.Status = &Status{"blocked", msg}; return r }
func (r *Result) Waiting(msg string) *Result     { r.Status = &Status{"waiting", msg}; return r }
func (r *Result) Maintenance(msg string) *Result { r.Status = &Status{"maintenance", msg}; return r }
