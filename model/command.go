package model

// Command is one entry of the replicated log. Exactly one of the payload
// fields is set, matching Op.
type Command struct {
	Op Op `json:"op"`
	// RequestID makes a retried command apply at most once.
	RequestID string `json:"request_id,omitempty"`
	// Time is the proposer's clock (unix nanoseconds): the FSM never reads
	// its own.
	Time int64 `json:"time,omitempty"`

	Deploy   *Deploy          `json:"deploy,omitempty"`
	Machine  *RegisterMachine `json:"machine,omitempty"`
	Results  []Result         `json:"results,omitempty"`
	Resolve  *ResolveUnit     `json:"resolve,omitempty"`
	Liveness *SetLiveness     `json:"liveness,omitempty"`
	Auth     *Auth            `json:"auth,omitempty"`
}

// Op names a command.
type Op string

// Commands.
const (
	OpDeploy   Op = "deploy"
	OpMachine  Op = "register-machine"
	OpResults  Op = "results"
	OpResolve  Op = "resolved"
	OpLiveness Op = "liveness"
	OpAuth     Op = "auth"
)

// Deploy makes the environment the desired one, as a whole or not at all.
type Deploy struct {
	Env    Environment       `json:"env"`
	Charms map[string]*Charm `json:"charms"`
	// BaseIndex, when set, is the EnvIndex the change was planned against;
	// the deploy is refused if the environment moved since.
	BaseIndex uint64 `json:"base_index,omitempty"`
}

// RegisterMachine records a machine whose agent has started.
type RegisterMachine struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	// Credential is the hash of the agent's new token.
	Credential string `json:"credential,omitempty"`
}

// Result is what one reconcile of one unit produced, already checked and
// translated to relation ids by the engine. A failed run carries Error.
type Result struct {
	Unit string `json:"unit"`
	// Hash is the universe the hook was given.
	Hash string `json:"hash"`
	// Leader is whether that universe said the unit leads its service.
	Leader bool  `json:"leader"`
	Seen   *Seen `json:"seen,omitempty"`
	// Settings replaces the unit's own bags, by relation id.
	Settings map[int]map[string]string `json:"settings,omitempty"`
	// App replaces the service's bags (leader only), by relation id.
	App        map[int]map[string]string `json:"app,omitempty"`
	LeaderData map[string]string         `json:"leader_data,omitempty"`
	Status     *Status                   `json:"status,omitempty"`
	State      map[string]string         `json:"state,omitempty"`
	Ports      []string                  `json:"ports,omitempty"`
	// Output is a hash of everything the hook returned, for divergence.
	Output string `json:"output,omitempty"`
	// Churn lists universe keys that changed since the unit's previous run.
	Churn []string `json:"churn,omitempty"`
	// Error, when set, is why the run failed; nothing else is applied.
	// Seen then describes the failed universe, so that resolved --no-retry
	// can accept it as reconciled.
	Error string `json:"error,omitempty"`
	// RetryAt is when a failed run may be retried (unix nanoseconds).
	RetryAt int64 `json:"retry_at,omitempty"`
}

// ResolveUnit is `fixpoint resolved`.
type ResolveUnit struct {
	Unit    string `json:"unit"`
	NoRetry bool   `json:"no_retry"`
}

// SetLiveness records which machines' agents are lost.
type SetLiveness struct {
	Lost map[string]bool `json:"lost"`
}

// Response is what applying a command returns to its proposer.
type Response struct {
	Index uint64 `json:"index"`
	// Duplicate is set when the request id was already applied.
	Duplicate bool `json:"duplicate,omitempty"`
	// Changes lists what a deploy changed.
	Changes []Change `json:"changes,omitempty"`
	// Skipped lists the results that were not taken, each with its reason.
	Skipped []string `json:"skipped,omitempty"`
}
