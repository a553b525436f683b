package raftstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/model"
)

// Entry type tags: the first byte of every LogCommand entry's data. The
// rest is JSON. A tag lets raftstore replicate its own bookkeeping next to
// model commands without the model knowing.
const (
	entryCommand  byte = 1 // model.Command
	entryRegister byte = 2 // nodeInfo: a node's HTTP address
	entryForget   byte = 3 // nodeInfo (ID only): a removed node
	entryReplace  byte = 4 // backup: replace the model state wholesale
)

// snapshotVersion is the version of the snapshot and backup document.
const snapshotVersion = 1

// nodeInfo is one entry of the node registry: how to reach a member over
// HTTP. Raft itself only knows Raft addresses.
type nodeInfo struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raft_addr,omitempty"`
	HTTPAddr string `json:"http_addr,omitempty"`
}

// document is what a snapshot and a backup hold: the model state, the node
// registry and the index the FSM had applied.
type document struct {
	Version int                 `json:"version"`
	Index   uint64              `json:"index"`
	Nodes   map[string]nodeInfo `json:"nodes"`
	// Level is the cluster's recorded feature level; absent (0) for the
	// base level.
	Level model.Level `json:"level,omitempty"`
	// State is the default environment's: all a document written before
	// environments existed holds, and what a v0.3.0 server reads.
	State *model.State `json:"state"`
	// DefaultUUID is the default environment's uuid, once given.
	DefaultUUID string `json:"default_uuid,omitempty"`
	// Envs are the other environments, by name (model.Cluster).
	Envs map[string]*model.Env `json:"environments,omitempty"`
	// Tokens are the environments' tokens, by hash (model.Cluster).
	Tokens map[string]*model.EnvToken `json:"tokens,omitempty"`
	// Logs and Events are the diagnostics kept beside the state (diag.go).
	Logs   *model.BoundedDump[model.LogLine] `json:"logs,omitempty"`
	Events *model.BoundedDump[model.Event]   `json:"events,omitempty"`
}

// encodeEntry prefixes the JSON of v with its type tag.
func encodeEntry(tag byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode entry type %d: %w", tag, err)
	}
	return append([]byte{tag}, b...), nil
}

// cluster is the document's environments as one model.Cluster; a
// document written before environments existed is one default
// environment.
func (d *document) cluster() *model.Cluster {
	c := &model.Cluster{Default: d.State, DefaultUUID: d.DefaultUUID, Envs: d.Envs, Tokens: d.Tokens}
	c.Normalize()
	// The document holds the cluster's fields once, in the default
	// environment; a caller may have replaced its credentials.
	c.SyncCopies()
	return c
}

// fsm is the replicated state machine: the environments (model.Cluster)
// plus the node registry.
// The FSM goroutine of raft is its only writer.
type fsm struct {
	log hclog.Logger

	// mu guards cluster and nodes: View reads under it.
	mu      sync.RWMutex
	cluster *model.Cluster
	// journals are each environment's journal ("" the default): what
	// each applied command changed there, for the controllers' views
	// (Store.Changes). Derived, not replicated: a restored or replaced
	// cluster starts new ones.
	journals map[string]*model.Journal
	// sealer is the server's cluster key, given to every state the FSM
	// holds (model.State.SetSealer).
	sealer model.Sealer
	nodes  map[string]nodeInfo
	// Set while applying a batch, published when it ends (mu held).
	replacedAt uint64
	nodesDirty bool

	// meta guards what accessors read without mu, so that Index,
	// LeaderHTTP and friends may be called from inside View: a second
	// RLock of mu could deadlock behind a waiting writer.
	meta sync.Mutex
	// index is the last entry the FSM saw (commands and configuration
	// changes; raft never hands it no-op or barrier entries).
	index uint64
	// restoredAt is the index at which the state was last replaced
	// wholesale (snapshot restore or backup restore). Indexes never go
	// backwards across a replacement, so a watcher that observed an index
	// below restoredAt missed the replacement.
	restoredAt uint64
	// changed is closed and replaced whenever index moves.
	changed chan struct{}
	// applied remembers when recent entries were applied here (meta
	// held), for measuring how long a change takes to reach agents.
	applied appliedRing

	// restores counts replacements, for logs and tests.
	restores atomic.Uint64
	// published is a read-only copy of nodes, swapped on change.
	published atomic.Pointer[map[string]nodeInfo]
	// diag is the debug log and the unit events (diag.go).
	diag diagnostics
	// growth is what the log grew by since the last snapshot
	// (compact.go).
	growth *logGrowth

	// nodeID names this node in a halt; build is its feature level.
	nodeID string
	build  model.Level
	// level is the cluster's recorded feature level, 0 for the base
	// (written under mu, read anywhere).
	level atomic.Int64
	// halted is set at the first entry this build cannot apply: the FSM
	// applies nothing from there on (it never skips an entry), and takes
	// no snapshot, which would count the entries it did not apply.
	halted atomic.Pointer[haltError]
}

func newFSM(log hclog.Logger) *fsm {
	f := &fsm{
		build:   model.BuildLevel,
		log:     log,
		cluster: model.NewCluster(),
		nodes:   map[string]nodeInfo{},
		changed: make(chan struct{}),
		diag:    newDiagnostics(),
		growth:  newLogGrowth(snapshotFloor),
	}
	f.resetJournals(0)
	f.publishNodes()
	return f
}

// setSealer gives the FSM's states the server's cluster key.
func (f *fsm) setSealer(s model.Sealer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sealer = s
	f.cluster.SetSealer(s)
}

// publishNodes makes a copy of the registry for lock-free readers. mu is
// held (or the fsm is new).
func (f *fsm) publishNodes() {
	cp := make(map[string]nodeInfo, len(f.nodes))
	for k, v := range f.nodes {
		cp[k] = v
	}
	f.published.Store(&cp)
}

// advance publishes a new applied index and wakes watchers. mu is held.
func (f *fsm) advance(index, restoredAt uint64) {
	f.meta.Lock()
	defer f.meta.Unlock()
	f.index = index
	if restoredAt > 0 {
		f.restoredAt = restoredAt
	}
	close(f.changed)
	f.changed = make(chan struct{})
}

var _ raft.BatchingFSM = (*fsm)(nil)

// Apply applies one entry. It exists for the raft.FSM interface; raft uses
// ApplyBatch.
func (f *fsm) Apply(l *raft.Log) any {
	return f.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch applies committed entries under one write lock. Each response
// is a *model.Response, nil (bookkeeping entries) or an error: the command
// was refused, deterministically, on every node.
func (f *fsm) ApplyBatch(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	if h := f.halted.Load(); h != nil {
		for i := range out {
			out[i] = h
		}
		return out
	}
	if len(logs) == 0 {
		return out
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replacedAt, f.nodesDirty = 0, false
	for i, l := range logs {
		f.growth.applied(len(l.Data))
		if l.Type == raft.LogCommand {
			out[i] = f.applyEntry(l.Index, l.Data)
			if h, ok := out[i].(*haltError); ok {
				f.halt(h)
				for j := i + 1; j < len(out); j++ {
					out[j] = h
				}
				logs = logs[:i]
				break
			}
		}
		// Every entry the FSM sees moves the state's index, configuration
		// changes included: callers pass st.Index to WaitIndex, so the two
		// must never differ; so must every environment's.
		f.cluster.SetIndex(l.Index)
	}
	if f.nodesDirty {
		f.publishNodes()
	}
	if len(logs) == 0 {
		return out
	}
	// Recorded before watchers wake, so that no wake precedes it.
	f.meta.Lock()
	f.applied.add(logs[0].Index, logs[len(logs)-1].Index, time.Now())
	f.meta.Unlock()
	f.advance(logs[len(logs)-1].Index, f.replacedAt)
	return out
}

// applyEntry decodes and applies one LogCommand entry. f.mu is held.
func (f *fsm) applyEntry(index uint64, data []byte) any {
	if len(data) == 0 {
		return fmt.Errorf("entry %d is empty", index)
	}
	body := data[1:]
	switch data[0] {
	case entryCommand:
		var c model.Command
		if err := json.Unmarshal(body, &c); err != nil {
			return fmt.Errorf("entry %d: decode command: %w", index, err)
		}
		if _, ok := c.Level(); !ok {
			// Every build refuses an unknown op before proposing it, so
			// only a newer build wrote this one.
			return &haltError{node: f.nodeID, index: index, reason: fmt.Sprintf("command %s is unknown to this build (feature level %d)", model.Quote(string(c.Op), 40), f.build)}
		}
		return f.applyCommand(index, &c)
	case entryRegister:
		var n nodeInfo
		if err := json.Unmarshal(body, &n); err != nil {
			return fmt.Errorf("entry %d: decode node: %w", index, err)
		}
		f.nodes[n.ID] = n
		f.nodesDirty = true
		return nil
	case entryForget:
		var n nodeInfo
		if err := json.Unmarshal(body, &n); err != nil {
			return fmt.Errorf("entry %d: decode node: %w", index, err)
		}
		delete(f.nodes, n.ID)
		f.nodesDirty = true
		return nil
	case entryLeveled:
		if len(body) < 2 {
			return fmt.Errorf("entry %d: leveled entry of %d bytes holds no entry", index, len(data))
		}
		if need := model.Level(body[0]); need > f.build {
			return &haltError{node: f.nodeID, index: index, reason: fmt.Sprintf("the entry needs feature level %d and this build has level %d", need, f.build)}
		}
		return f.applyEntry(index, body[1:])
	case entryClusterLevel:
		r, err := decodeLevelRecord(body)
		if err != nil {
			return fmt.Errorf("entry %d: %w", index, err)
		}
		if r.Level > f.build {
			return &haltError{node: f.nodeID, index: index, reason: fmt.Sprintf("the cluster's level rises to %d and this build has level %d", r.Level, f.build)}
		}
		// Levels only rise: a record is never undone.
		if int64(r.Level) > f.level.Load() {
			f.level.Store(int64(r.Level))
			f.log.Info("the cluster's feature level rose", "index", index, "level", r.Level)
			if r.Level >= model.LevelRecorded {
				f.cluster.NumberMachines(index)
				// An environment applied before documents were kept
				// gets its document now, on every server alike.
				f.cluster.AdoptDocuments()
			}
		}
		if r.EnvUUID != "" && f.cluster.DefaultUUID == "" {
			// Given once, by the first record that carries one.
			f.cluster.DefaultUUID = r.EnvUUID
		}
		return nil
	case entryReplace:
		var d document
		if err := json.Unmarshal(body, &d); err != nil {
			return fmt.Errorf("entry %d: decode backup: %w", index, err)
		}
		if d.State == nil {
			return fmt.Errorf("entry %d: backup holds no state", index)
		}
		// The registry is the running cluster's, not the backup's: a backup
		// may be restored into a different cluster. Every environment is
		// the backup's; one written before environments is the default.
		c := d.cluster()
		c.SetSealer(f.sealer)
		if f.clusterLevel() >= model.LevelRecorded {
			// A backup of a v0.3.0 cluster holds no document.
			c.AdoptDocuments()
		}
		f.cluster = c
		f.resetJournals(index)
		f.replacedAt = index
		f.restores.Add(1)
		f.log.Info("state replaced from backup", "index", index, "backup_index", d.Index)
		return &model.Response{Index: index}
	default:
		// A newer build wrote an entry this one does not know. Refusing
		// it would leave this replica without a change the newer ones
		// made: stop instead (fsm.halt).
		return &haltError{node: f.nodeID, index: index, reason: fmt.Sprintf("entry type %d is unknown to this build (feature level %d)", data[0], f.build)}
	}
}

// resetJournals starts every environment's journal at index: the
// cluster was replaced whole. mu is held (or the fsm is new).
func (f *fsm) resetJournals(index uint64) {
	f.journals = map[string]*model.Journal{"": model.NewJournal(index)}
	for name := range f.cluster.Envs {
		f.journals[name] = model.NewJournal(index)
	}
}

// journalApplied records in each environment's journal what the command
// at index changed there, and starts or ends the journal of an
// environment it adds or removes. mu is held.
func (f *fsm) journalApplied(index uint64, c *model.Command, resp *model.Response) {
	switch {
	case c.Op == model.OpEnvAdd && c.EnvAdd != nil:
		if _, ok := f.journals[c.EnvAdd.Name]; !ok {
			f.journals[c.EnvAdd.Name] = model.NewJournal(index)
		}
	case c.Op == model.OpEnvRemove && c.EnvRemove != nil:
		if _, ok := f.cluster.Envs[c.EnvRemove.Name]; !ok {
			delete(f.journals, c.EnvRemove.Name)
		}
	}
	resp.TouchedEnvs(func(env string, t *model.Touched) {
		j := f.journals[env]
		if j == nil {
			// Its history before this entry is unknown here.
			j = model.NewJournal(index - 1)
			f.journals[env] = j
		}
		j.Record(t)
	})
}

// changes is environment env's journal since index; mu is held (View).
func (f *fsm) changes(env string, since uint64) ([]model.Touched, bool) {
	return f.journals[env].ChangesSince(since)
}

// applyCommand runs the model's transition. A panic in it would repeat on
// every replica and on every restart (the entry stays in the log), taking
// the control plane down for good; turning it into a refusal keeps the
// replicas equal, because the model is deterministic, and keeps them up.
func (f *fsm) applyCommand(index uint64, c *model.Command) (out any) {
	defer func() {
		if p := recover(); p != nil {
			f.log.Error("model panicked applying a command", "index", index, "op", c.Op, "panic", p)
			out = fmt.Errorf("entry %d: applying %s failed inside the model: %v", index, c.Op, p)
		}
	}()
	if c.Op == model.OpLogs {
		return f.diag.applyLogs(index, c)
	}
	if c.Op == model.OpClusterKey && c.ClusterKey != nil {
		f.adoptKey(c.ClusterKey)
	}
	resp, err := f.cluster.Apply(index, c)
	if err != nil {
		return err
	}
	f.journalApplied(index, c, resp)
	f.diag.events.Add(resp.Events())
	return resp
}

// Snapshot takes a frozen copy of the state now. Raft calls it on the FSM
// goroutine, so nothing applies meanwhile; Persist encodes the copy later,
// while entries apply again, so the copy must not share what applies
// change (model.State.Clone). Copying costs a fraction of encoding, which
// is all the time the FSM stands still for a snapshot.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	if h := f.halted.Load(); h != nil {
		return nil, fmt.Errorf("no snapshot: %w", h)
	}
	return f.frozen(), nil
}

// frozen returns the snapshot document of the current state, as a copy.
func (f *fsm) frozen() *fsmSnapshot {
	f.mu.RLock()
	defer f.mu.RUnlock()
	// Under mu nothing applies, so the index and the state agree, and
	// the log's growth starts again from what the copy holds.
	f.growth.frozen()
	return &fsmSnapshot{index: f.appliedIndex(), level: f.clusterLevelRecorded(), nodes: maps.Clone(f.nodes), cluster: f.cluster.Clone(), logs: f.diag.logs.Dump(), events: f.diag.events.Dump(), growth: f.growth}
}

// Restore replaces everything with a snapshot and wakes watchers with a
// reset: objects they tracked may have vanished without an index telling.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	d, err := decodeDocument(rc)
	if err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	if d.Level > f.build {
		// A snapshot of a cluster whose log this build cannot apply.
		f.halt(&haltError{node: f.nodeID, index: d.Index, reason: fmt.Sprintf("the snapshot at index %d is of a cluster at feature level %d and this build has level %d", d.Index, d.Level, f.build)})
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := d.cluster()
	c.SetSealer(f.sealer)
	c.SetIndex(d.Index)
	f.cluster = c
	f.growth.frozen()
	f.resetJournals(d.Index)
	f.nodes = d.Nodes
	f.level.Store(int64(d.Level))
	f.diag.load(d)
	f.publishNodes()
	f.restores.Add(1)
	f.advance(d.Index, d.Index)
	f.log.Info("restored snapshot", "index", d.Index, "nodes", len(d.Nodes))
	return nil
}

// decodeDocument reads and checks a snapshot or backup document, a value
// at a time (readDocument).
func decodeDocument(r io.Reader) (*document, error) {
	d, err := readDocument(r)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if d.Version != snapshotVersion {
		return nil, fmt.Errorf("version %d is not supported (this build reads version %d)", d.Version, snapshotVersion)
	}
	if d.State == nil {
		return nil, errors.New("document holds no state")
	}
	d.State.Normalize()
	for name, e := range d.Envs {
		if e == nil || e.State == nil {
			return nil, fmt.Errorf("environment %s holds no state", model.Quote(name, 72))
		}
		if e.Name != name {
			return nil, fmt.Errorf("environment %s is filed under %s", model.Quote(e.Name, 72), model.Quote(name, 72))
		}
		e.State.Normalize()
	}
	if d.Nodes == nil {
		d.Nodes = map[string]nodeInfo{}
	}
	return d, nil
}

// watch returns the applied index, the last replacement index and a channel
// closed on the next change.
func (f *fsm) watch() (index, restoredAt uint64, changed <-chan struct{}) {
	f.meta.Lock()
	defer f.meta.Unlock()
	return f.index, f.restoredAt, f.changed
}

// appliedAt is when entry index was applied on this node, if it is among
// the last appliedKept entries.
func (f *fsm) appliedAt(index uint64) (time.Time, bool) {
	f.meta.Lock()
	defer f.meta.Unlock()
	return f.applied.at(index)
}

// appliedKept is how many entries' apply times an FSM remembers.
const appliedKept = 4096

// appliedRing holds the apply times of the last appliedKept entries, by
// index modulo its size: 64 KiB, not replicated.
type appliedRing struct {
	index [appliedKept]uint64
	nanos [appliedKept]int64
}

// add records that entries first..last were applied at t.
func (r *appliedRing) add(first, last uint64, t time.Time) {
	if last-first >= appliedKept {
		first = last - appliedKept + 1
	}
	for i := first; i <= last; i++ {
		r.index[i%appliedKept], r.nanos[i%appliedKept] = i, t.UnixNano()
	}
}

func (r *appliedRing) at(index uint64) (time.Time, bool) {
	if index == 0 || r.index[index%appliedKept] != index {
		return time.Time{}, false
	}
	return time.Unix(0, r.nanos[index%appliedKept]), true
}

// appliedIndex is the last entry the FSM saw.
func (f *fsm) appliedIndex() uint64 {
	f.meta.Lock()
	defer f.meta.Unlock()
	return f.index
}

// node returns a registry entry.
func (f *fsm) node(id string) (nodeInfo, bool) {
	n, ok := (*f.published.Load())[id]
	return n, ok
}

// registry returns a copy of the node registry.
func (f *fsm) registry() map[string]nodeInfo {
	nodes := *f.published.Load()
	out := make(map[string]nodeInfo, len(nodes))
	for k, v := range nodes {
		out[k] = v
	}
	return out
}

// halt stops the FSM at h's entry, for good in this process, and says why.
func (f *fsm) halt(h *haltError) {
	f.halted.Store(h)
	f.log.Error("stopped applying the log; upgrade this node", "index", h.index, "reason", h.reason)
}

// haltedAt is why the FSM stopped, nil while it applies.
func (f *fsm) haltedAt() *haltError { return f.halted.Load() }

// clusterLevelRecorded is the level the log recorded, 0 for none.
func (f *fsm) clusterLevelRecorded() model.Level { return model.Level(f.level.Load()) }

// clusterLevel is the cluster's feature level: the base level until the
// log records another.
func (f *fsm) clusterLevel() model.Level { return advertised(f.clusterLevelRecorded()) }
