package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// Command is one entry of the replicated log. Exactly one of the payload
// fields is set, matching Op.
type Command struct {
	Op Op `json:"op"`
	// RequestID makes a retried command apply at most once.
	RequestID string `json:"request_id,omitempty"`
	// Digest binds RequestID to the command (see Fingerprint): the same
	// id with a different command is refused, never taken as a retry.
	Digest string `json:"digest,omitempty"`
	// Time is the proposer's clock (unix nanoseconds): the FSM never reads
	// its own.
	Time int64 `json:"time,omitempty"`
	// Env names the environment a per-environment command applies to;
	// empty is the default environment (cluster.go). Commands on the
	// cluster's machines, credentials and limits carry none.
	Env string `json:"env,omitempty"`
	// SecretTimes asks that the secrets and revisions the command makes
	// or changes record Time as their wall-clock created and updated
	// times: the proposer sets it once the cluster's level records them
	// (LevelRecorded), so that a build that records none never holds
	// another state than one that does.
	SecretTimes bool `json:"secret_times,omitempty"`

	Deploy   *Deploy          `json:"deploy,omitempty"`
	Machine  *RegisterMachine `json:"machine,omitempty"`
	Results  []Result         `json:"results,omitempty"`
	Resolve  *ResolveUnit     `json:"resolve,omitempty"`
	Liveness *SetLiveness     `json:"liveness,omitempty"`
	Auth     *Auth            `json:"auth,omitempty"`
	Reset    *ResetMachine    `json:"reset,omitempty"`
	Join     *JoinToken       `json:"join,omitempty"`
	Limits   *Limits          `json:"limits,omitempty"`
	// Logs is debug-log lines, kept beside the state (logs.go).
	Logs *LogBatch `json:"logs,omitempty"`

	Enqueue     *EnqueueAction `json:"enqueue,omitempty"`
	StartAction *StartAction   `json:"start_action,omitempty"`
	Finish      *FinishAction  `json:"finish,omitempty"`
	// ClusterKey rotates the cluster key (secrets_key.go).
	ClusterKey *ClusterKey `json:"cluster_key,omitempty"`
	// SecretDue records rotations and expiries that came due
	// (secrets_due.go).
	SecretDue *SecretDue `json:"secret_due,omitempty"`
	// EnvAdd and EnvRemove make and drop an environment (cluster_apply.go).
	EnvAdd    *EnvAdd    `json:"env_add,omitempty"`
	EnvRemove *EnvRemove `json:"env_remove,omitempty"`
	// TokenCreate and TokenRevoke keep environment tokens (tokens.go).
	TokenCreate *TokenCreate `json:"token_create,omitempty"`
	TokenRevoke *TokenRevoke `json:"token_revoke,omitempty"`
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
	OpReset    Op = "reset-machine"
	OpJoin     Op = "join-token"
	OpLimits   Op = "limits"
	// OpLogs carries debug-log lines: raftstore's FSM keeps them in its
	// log store; the state only sees the index move.
	OpLogs Op = "logs"
	// Actions (actions.go).
	OpEnqueue Op = "enqueue-action"
	OpStart   Op = "start-action"
	OpFinish  Op = "finish-action"
	// OpClusterKey adds a cluster key and re-seals the secrets under it.
	OpClusterKey Op = "cluster-key"
	// OpSecretDue records secrets' rotations and expiries that came due
	// at its Time: the leader's engine proposes it.
	OpSecretDue Op = "secret-due"
	// OpEnvAdd and OpEnvRemove make and drop an environment other than
	// the default one (cluster_apply.go).
	OpEnvAdd    Op = "env-add"
	OpEnvRemove Op = "env-remove"
	// OpTokenCreate and OpTokenRevoke keep an environment's tokens
	// (tokens.go).
	OpTokenCreate Op = "token-create"
	OpTokenRevoke Op = "token-revoke"
)

// Deploy makes the environment the desired one, as a whole or not at all.
type Deploy struct {
	Env    Environment       `json:"env"`
	Charms map[string]*Charm `json:"charms"`
	// BaseIndex, when set, is the EnvIndex the change was planned against;
	// the deploy is refused if the environment moved since (ErrEnvMoved).
	BaseIndex uint64 `json:"base_index,omitempty"`
	// RemoveUnits names units that go dying instead of their services'
	// newest ones: each service's count in Env is then the number of its
	// alive units that remain (checkRemoveUnits).
	RemoveUnits []string `json:"remove_units,omitempty"`
	// Record keeps Env as the environment's document (State.Document):
	// set by the control plane only once the cluster's feature level
	// records documents (LevelRecorded), so that a build that keeps none
	// never holds another state than one that does.
	Record bool `json:"record,omitempty"`
	// SecretRevisions are the new revisions of user secrets, by name,
	// sealed by the node that took the request (ReviseUserSecrets).
	SecretRevisions map[string]string `json:"secret_revisions,omitempty"`
}

// RegisterMachine records a machine whose agent has started.
type RegisterMachine struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	// Credential is the hash of the agent's new token.
	Credential string `json:"credential,omitempty"`
	// Renew is the hash of the credential the registrant presented, empty
	// for a join token. Once a machine holds a credential, only that one
	// renews it: a leaked join token cannot take a machine over.
	Renew string `json:"renew,omitempty"`
	// Number asks for the machine's Juju id (Machine.ID) to be given if
	// it has none: set by the control plane once the cluster's feature
	// level numbers machines (LevelRecorded), so that a build that gives
	// none never holds another state than one that does.
	Number bool `json:"number,omitempty"`
	// Labels replace the machine's labels (Machine.Labels): set by the
	// control plane only once the cluster's feature level keeps them
	// (LevelRecorded).
	Labels map[string]string `json:"labels,omitempty"`
}

// ResetMachine is `fixpoint machine reset|forget`: the machine's
// credential is dropped, so that the next registration with the join
// token is accepted (an agent that lost its credential), or the machine is
// removed altogether (Forget).
type ResetMachine struct {
	Name   string `json:"name"`
	Forget bool   `json:"forget,omitempty"`
}

// JoinToken is `fixpoint token rotate|revoke join`: Hash replaces the join
// token's hash (empty revokes joining); Expires, when set, is when the new
// one stops being accepted (unix nanoseconds).
type JoinToken struct {
	Hash    string `json:"hash"`
	Expires int64  `json:"expires,omitempty"`
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
	// StorageAdd asks for more instances per store (storage-add).
	StorageAdd map[string]int `json:"storage_add,omitempty"`
	// Reboot asks for the unit's machine to reboot (juju-reboot): every
	// unit on it runs stop, then start.
	Reboot bool `json:"reboot,omitempty"`
	// Secrets are the secret changes the hook made, contents sealed.
	Secrets []SecretChange `json:"secrets,omitempty"`
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
	// Started is when the run started (unix nanoseconds, the leader's
	// clock less the run's duration), for its event.
	Started int64 `json:"started,omitempty"`
	// Timer marks a run the update-status timer woke (engine/schedule),
	// not a change: it is left out of the divergence accounting, since
	// a settled unit woken every few minutes is not failing to settle.
	Timer bool `json:"timer,omitempty"`
}

// ResolveUnit is `fixpoint resolved`: of one unit (Unit), of every unit
// of a service in error (Service), or of every unit in error (All);
// exactly one is set. A batch is one entry whatever its size: the FSM
// picks the units in error when it applies it, skipping the others.
type ResolveUnit struct {
	Unit    string `json:"unit"`
	Service string `json:"service,omitempty"`
	All     bool   `json:"all,omitempty"`
	NoRetry bool   `json:"no_retry"`
}

// check refuses a resolve that names no unit, or more than one way.
func (r *ResolveUnit) check() error {
	switch {
	case r.All && (r.Unit != "" || r.Service != ""), r.Unit != "" && r.Service != "":
		return fmt.Errorf("resolved names a unit, a service or all units, not several")
	case r.All:
		return nil
	case r.Service != "":
		return CheckName(KindService, r.Service)
	}
	return CheckUnitName(r.Unit)
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
	// Skipped lists results refused, with reasons.
	Skipped []string `json:"skipped,omitempty"`
	// Resolved lists the units a resolve of a service or of all units
	// marked, the first MaxListedResolved by name; ResolvedMore counts
	// the others.
	Resolved     []string `json:"resolved,omitempty"`
	ResolvedMore int      `json:"resolved_more,omitempty"`
	// events are what the command did to units (events.go), for the FSM.
	events []Event
	// touched is what the command changed, by environment ("" the
	// default, or the state State.Apply applied it to), for the
	// journals its applier keeps (Touched).
	touched []envTouched
	// Action is the operation an enqueue-action made.
	Action int `json:"action,omitempty"`
	// Dropped counts the debug-log lines of a logs command the leader
	// dropped, over their source's budget, before it proposed the rest.
	Dropped int `json:"dropped,omitempty"`
}

// Touched is what the command changed in environment env ("" the
// default, or the state State.Apply applied it to), for that
// environment's Journal; nil when it changed nothing there.
func (r *Response) Touched(env string) *Touched {
	for _, e := range r.touched {
		if e.env == env {
			return e.t
		}
	}
	return nil
}

// TouchedEnvs calls fn with each environment the command changed and
// what it changed there.
func (r *Response) TouchedEnvs(fn func(env string, t *Touched)) {
	for _, e := range r.touched {
		fn(e.env, e.t)
	}
}

// envTouched is what a command changed in one environment.
type envTouched struct {
	env string
	t   *Touched
}

// MaxListedResolved caps Response.Resolved: the answer to resolving a
// million units names a page of them, not all.
const MaxListedResolved = 100

// Bounds on a command, checked before it is proposed and again by the FSM.
const (
	// MaxCommandBytes caps one encoded command, as etcd caps a request:
	// an entry is replicated to every node and kept in every snapshot.
	MaxCommandBytes = 3 << 19 // 1.5 MiB
	// MaxRequestID caps a request id.
	MaxRequestID = 128
	// MaxResults caps the results in one command.
	MaxResults = 4096
	maxAddress = 253
	maxHash    = 128
	maxChurn   = 1024
)

// Fingerprint is the digest of what the command asks, without its request
// id, time and digest: two sends of one request have the same one.
func (c *Command) Fingerprint() string {
	cp := *c
	cp.RequestID, cp.Time, cp.Digest = "", 0, ""
	if cp.Deploy != nil && (cp.Deploy.SecretRevisions != nil || cp.Deploy.Record) {
		// Sealing is randomised: a retry seals the same values anew.
		// Record is the control plane's, not the client's: a retry
		// across a raise of the cluster's level asks the same.
		d := *cp.Deploy
		d.SecretRevisions, d.Record = nil, false
		cp.Deploy = &d
	}
	data, err := json.Marshal(&cp)
	if err != nil {
		// Commands are plain data; a marshal failure is a bug, and a
		// digest no other command has keeps the id from matching.
		data = []byte(err.Error())
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Validate checks everything about the command that does not depend on the
// state: shape, sizes, names and, for a deploy, the environment against
// its charms. The API runs it before proposing; the FSM runs it again as
// the final judge, so a command refused here never reaches the log.
func (c *Command) Validate() error {
	_, err := c.Check()
	return err
}

// Check is Validate; for a deploy it also returns the resolved environment,
// so that the FSM, and a plan, do not resolve it twice.
func (c *Command) Check() (*Desired, error) {
	if len(c.RequestID) > MaxRequestID || strings.ContainsFunc(c.RequestID, isControl) {
		return nil, fmt.Errorf("request id %s: at most %d printable bytes", Quote(c.RequestID, 24), MaxRequestID)
	}
	if c.Digest != "" && !isHexHash(c.Digest) {
		return nil, fmt.Errorf("digest %s is not a sha256 hex digest", Quote(c.Digest, 24))
	}
	set := 0
	for _, p := range []bool{c.Deploy != nil, c.Machine != nil, c.Results != nil, c.Resolve != nil, c.Liveness != nil, c.Auth != nil, c.Reset != nil, c.Join != nil, c.Limits != nil, c.Logs != nil, c.Enqueue != nil, c.StartAction != nil, c.Finish != nil, c.ClusterKey != nil, c.SecretDue != nil, c.EnvAdd != nil, c.EnvRemove != nil, c.TokenCreate != nil, c.TokenRevoke != nil} {
		if p {
			set++
		}
	}
	if set > 1 {
		return nil, fmt.Errorf("%s command carries %d payloads; exactly one matching its op is allowed", Quote(string(c.Op), 24), set)
	}
	missing := func() error { return fmt.Errorf("%s command without its payload", c.Op) }
	if c.SecretTimes && (c.Time <= 0 || !secretsTimed(c.Op)) {
		return nil, fmt.Errorf("%s command asks for secret times: only a deploy, results or finish-action command with its time records them", Quote(string(c.Op), 24))
	}
	if err := c.checkEnv(); err != nil {
		return nil, err
	}
	switch c.Op {
	case OpDeploy:
		if c.Deploy == nil {
			return nil, missing()
		}
		return c.Deploy.check()
	case OpMachine:
		if c.Machine == nil {
			return nil, missing()
		}
		return nil, c.Machine.check()
	case OpResults:
		if len(c.Results) > MaxResults {
			return nil, fmt.Errorf("%d results in one command; the limit is %d", len(c.Results), MaxResults)
		}
		for i := range c.Results {
			if err := c.Results[i].check(); err != nil {
				return nil, fmt.Errorf("results[%d]: %w", i, err)
			}
		}
	case OpResolve:
		if c.Resolve == nil {
			return nil, missing()
		}
		return nil, c.Resolve.check()
	case OpLiveness:
		if c.Liveness == nil {
			return nil, missing()
		}
		for m := range c.Liveness.Lost {
			if err := CheckName(KindMachine, m); err != nil {
				return nil, err
			}
		}
	case OpAuth:
		if c.Auth == nil {
			return nil, missing()
		}
		if !isHexHash(c.Auth.Operator) || !isHexHash(c.Auth.Join) {
			return nil, fmt.Errorf("auth command needs operator and join credentials as sha256 hex digests")
		}
	case OpReset:
		if c.Reset == nil {
			return nil, missing()
		}
		return nil, CheckName(KindMachine, c.Reset.Name)
	case OpJoin:
		if c.Join == nil {
			return nil, missing()
		}
		if c.Join.Hash != "" && !isHexHash(c.Join.Hash) {
			return nil, fmt.Errorf("join token hash is not a sha256 hex digest")
		}
		if c.Join.Expires < 0 {
			return nil, fmt.Errorf("join token expiry %d is before 1970", c.Join.Expires)
		}
	case OpLimits:
		if c.Limits == nil {
			return nil, missing()
		}
		return nil, c.Limits.Validate()
	case OpLogs:
		if c.Logs == nil {
			return nil, missing()
		}
		return nil, c.Logs.check()
	case OpEnqueue:
		if c.Enqueue == nil {
			return nil, missing()
		}
		return nil, c.Enqueue.check()
	case OpStart:
		if c.StartAction == nil {
			return nil, missing()
		}
		return nil, CheckName(KindMachine, c.StartAction.Machine)
	case OpFinish:
		if c.Finish == nil {
			return nil, missing()
		}
		return nil, c.Finish.check()
	case OpClusterKey:
		if c.ClusterKey == nil {
			return nil, missing()
		}
		return nil, c.ClusterKey.check()
	case OpSecretDue:
		if c.SecretDue == nil {
			return nil, missing()
		}
		if c.Time <= 0 {
			return nil, fmt.Errorf("secret-due command without its time: the proposer's clock says what came due")
		}
		return nil, c.SecretDue.check()
	case OpEnvAdd:
		if c.EnvAdd == nil {
			return nil, missing()
		}
		return nil, c.EnvAdd.check()
	case OpEnvRemove:
		if c.EnvRemove == nil {
			return nil, missing()
		}
		return nil, c.EnvRemove.check()
	case OpTokenCreate:
		if c.TokenCreate == nil {
			return nil, missing()
		}
		return nil, c.TokenCreate.check()
	case OpTokenRevoke:
		if c.TokenRevoke == nil {
			return nil, missing()
		}
		return nil, c.TokenRevoke.check()
	default:
		return nil, fmt.Errorf("unknown command %s", Quote(string(c.Op), 24))
	}
	return nil, nil
}

func (d *Deploy) check() (*Desired, error) {
	if len(d.Env.Name) > MaxNameLen || strings.ContainsFunc(d.Env.Name, isControl) {
		return nil, fmt.Errorf("environment name %s: at most %d printable bytes", Quote(d.Env.Name, 24), MaxNameLen)
	}
	for h, c := range d.Charms {
		if c == nil || c.Hash != h {
			return nil, fmt.Errorf("charm %s: hash in payload does not match its key", Quote(h, 72))
		}
		if len(h) > maxHash {
			return nil, fmt.Errorf("charm %s: not a content hash", Quote(h, 72))
		}
		if err := c.Meta.Validate(); err != nil {
			return nil, err
		}
	}
	if err := checkRemoveNames(d.RemoveUnits); err != nil {
		return nil, err
	}
	desired, err := Resolve(&d.Env, d.Charms)
	if err != nil {
		return nil, err
	}
	desired.RemoveUnits = d.RemoveUnits
	return desired, attachSealed(desired, d.SecretRevisions)
}

func (m *RegisterMachine) check() error {
	if err := CheckName(KindMachine, m.Name); err != nil {
		return err
	}
	if m.Address == "" {
		return fmt.Errorf("machine %s: an address is required (it becomes its units' private-address)", m.Name)
	}
	if len(m.Address) > maxAddress || strings.ContainsFunc(m.Address, func(r rune) bool { return isControl(r) || r == ' ' }) {
		return fmt.Errorf("machine %s: address %s is not a host name or IP address (at most %d bytes, no spaces)", m.Name, Quote(m.Address, 24), maxAddress)
	}
	if (m.Credential != "" && !isHexHash(m.Credential)) || (m.Renew != "" && !isHexHash(m.Renew)) {
		return fmt.Errorf("machine %s: credentials are sha256 hex digests", m.Name)
	}
	if err := CheckLabels(m.Labels); err != nil {
		return fmt.Errorf("machine %s: %w (fixpoint agent --label KEY=VALUE)", m.Name, err)
	}
	return nil
}

func (r *Result) check() error {
	if err := CheckUnitName(r.Unit); err != nil {
		return err
	}
	if len(r.Hash) > maxHash || len(r.Output) > maxHash {
		return fmt.Errorf("%s: hash or output digest longer than %d bytes", r.Unit, maxHash)
	}
	if len(r.Error) > MaxErrorBytes {
		return fmt.Errorf("%s: error of %d bytes; the limit is %d", r.Unit, len(r.Error), MaxErrorBytes)
	}
	for what, bags := range map[string]map[int]map[string]string{"settings": r.Settings, "app": r.App} {
		for id, bag := range bags {
			if id < 0 {
				return fmt.Errorf("%s: %s for relation %d: no such relation id", r.Unit, what, id)
			}
			if k, err := CheckSettings(bag); err != nil {
				return fmt.Errorf("%s: %s of relation %d: %s: %w", r.Unit, what, id, Quote(k, 24), err)
			}
		}
	}
	for what, bag := range map[string]map[string]string{"leader_data": r.LeaderData, "state": r.State} {
		if k, err := CheckSettings(bag); err != nil {
			return fmt.Errorf("%s: %s: %s: %w", r.Unit, what, Quote(k, 24), err)
		}
	}
	if r.Status != nil {
		if _, err := CheckStatus(r.Status.State, r.Status.Message); err != nil {
			return fmt.Errorf("%s: %w", r.Unit, err)
		}
	}
	if i, err := CheckPorts(r.Ports); err != nil {
		return fmt.Errorf("%s: ports.%d: %w", r.Unit, i, err)
	}
	if err := CheckStorageAdd(r.StorageAdd); err != nil {
		return fmt.Errorf("%s: %w", r.Unit, err)
	}
	if err := checkSecrets(r.Secrets, true); err != nil {
		return fmt.Errorf("%s: %w", r.Unit, err)
	}
	if r.Seen != nil && r.Seen.Boot < 0 {
		return fmt.Errorf("%s: seen boot %d; a machine's reboots count from 0", r.Unit, r.Seen.Boot)
	}
	if len(r.Churn) > maxChurn {
		return fmt.Errorf("%s: %d churned keys; the limit is %d", r.Unit, len(r.Churn), maxChurn)
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

func isHexHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
