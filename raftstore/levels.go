package raftstore

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/model"
)

// Entry tags of model.LevelRecorded; every entry carrying one is wrapped
// in entryLeveled.
const (
	// entryClusterLevel is a levelRecord: the cluster's level rises.
	entryClusterLevel byte = 5
	// entryLeveled is an entry that needs a level above the base: the
	// tag, the level as one byte, then the entry itself. A node of a
	// lower level stops applying at it (fsm.applyEntry).
	entryLeveled byte = 6
)

// levelPoll is how often a node asks the others which build they run.
const levelPoll = 5 * time.Second

// levelRecord is the body of an entryClusterLevel.
type levelRecord struct {
	Level model.Level `json:"level"`
	// EnvUUID, when the default environment has none, is the uuid its
	// proposer gives it (model.Cluster.DefaultUUID).
	EnvUUID string `json:"env_uuid,omitempty"`
}

// tagKind is the level table's name of an entry tag; "" for a tag this
// build does not know.
func tagKind(tag byte) string {
	switch tag {
	case entryRegister:
		return model.KindRegister
	case entryForget:
		return model.KindForget
	case entryReplace:
		return model.KindReplace
	case entryClusterLevel:
		return model.KindClusterLevel
	case entryLeveled:
		return model.KindLeveled
	}
	return ""
}

// leveled wraps an encoded entry that needs a level above the base;
// entries of the base level go into the log as they are, which is what a
// build of the base level reads.
func leveled(need model.Level, data []byte) []byte {
	if need <= model.LevelBase {
		return data
	}
	return append([]byte{entryLeveled, byte(need)}, data...)
}

// haltError is why a node stopped applying the log: an entry that needs
// what its build lacks. The node applies nothing past it, and serves no
// read, until it runs a build that can.
type haltError struct {
	node   string
	index  uint64
	reason string
}

func (e *haltError) Error() string {
	return fmt.Sprintf("node %s stopped applying the log at entry %d: %s; restart it on a newer fixpoint build (it serves no reads until then)", e.node, e.index, e.reason)
}

// levelError refuses, before proposal, a command that needs a feature
// level some server of the cluster lacks.
type levelError struct{ msg string }

func (e *levelError) Error() string { return e.msg }

// peerLevels is what each server last said about its build: on joining,
// and in every status answer.
type peerLevels struct {
	mu   sync.Mutex
	seen map[string]model.NodeLevel
}

// record keeps what a server said.
func (p *peerLevels) record(n model.NodeLevel) {
	if n.Level == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen == nil {
		p.seen = map[string]model.NodeLevel{}
	}
	p.seen[n.ID] = n
}

// get is what a server last said, if it said anything.
func (p *peerLevels) get(id string) (model.NodeLevel, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n, ok := p.seen[id]
	return n, ok
}

// advertised is a server's level as it advertised it: a build that
// predates levels says nothing and runs the base level.
func advertised(l model.Level) model.Level {
	if l == 0 {
		return model.LevelBase
	}
	return l
}

// BuildLevel is this node's feature level.
func (s *Store) BuildLevel() model.Level {
	if s.cfg.level > 0 {
		return s.cfg.level
	}
	return model.BuildLevel
}

// Halted is why this node stopped applying the log, nil while it applies.
func (s *Store) Halted() error {
	if h := s.fsm.haltedAt(); h != nil {
		return h
	}
	return nil
}

// self is this node's own NodeLevel.
func (s *Store) self() model.NodeLevel {
	n := model.NodeLevel{ID: s.cfg.NodeID, Version: s.cfg.Version, Level: s.BuildLevel()}
	if h := s.fsm.haltedAt(); h != nil {
		n.Halted = h.reason
	}
	n.Memory = s.memoryCondition()
	return n
}

// memoryCondition is Config.Memory's answer, "" without one.
func (s *Store) memoryCondition() string {
	if s.cfg.Memory == nil {
		return ""
	}
	return s.cfg.Memory()
}

// ClusterLevel is the cluster's recorded level and what each server of
// the configuration last said about its build (level 0: never heard
// from), with the warnings an operator should see.
func (s *Store) ClusterLevel() model.ClusterLevel {
	c := model.ClusterLevel{Level: s.fsm.clusterLevel()}
	f := s.raft.GetConfiguration()
	if f.Error() != nil {
		return c
	}
	for _, srv := range f.Configuration().Servers {
		id := string(srv.ID)
		if id == s.cfg.NodeID {
			c.Nodes = append(c.Nodes, s.self())
			continue
		}
		n, _ := s.peers.get(id)
		n.ID = id
		c.Nodes = append(c.Nodes, n)
	}
	sort.Slice(c.Nodes, func(i, j int) bool { return c.Nodes[i].ID < c.Nodes[j].ID })
	c.Assess()
	return c
}

// levelLoop keeps the others' levels current on every node, and hands
// leadership away from a node that stopped applying: it could not answer
// what it commits.
func (s *Store) levelLoop() {
	defer s.wg.Done()
	t := time.NewTicker(levelPoll)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		if s.fsm.haltedAt() != nil {
			s.handOff()
		}
		ctx, cancel := context.WithTimeout(s.ctx, levelPoll)
		if _, err := s.Members(ctx); err != nil {
			s.log.Debug("level poll", "error", err)
		}
		cancel()
	}
}

// supported asks every server of the configuration for its level now,
// and refuses need, naming the servers to upgrade, unless each runs it:
// "node n1 runs feature level 1, this command needs 2: upgrade n1 first".
func (s *Store) supported(ctx context.Context, need model.Level) error {
	ms, err := s.Members(ctx)
	if err != nil {
		return fmt.Errorf("check the servers' feature levels: %w", err)
	}
	return lagging(ms, need)
}

// lagging refuses need, naming the members that do not run it.
func lagging(ms []Member, need model.Level) error {
	var why, ids []string
	for _, m := range ms {
		switch {
		case m.Unreachable || m.Level == 0:
			why = append(why, fmt.Sprintf("node %s did not answer with its feature level", m.ID))
		case m.Level < need:
			why = append(why, fmt.Sprintf("node %s runs feature level %d", m.ID, m.Level))
		default:
			continue
		}
		ids = append(ids, m.ID)
	}
	if len(why) == 0 {
		return nil
	}
	return &levelError{fmt.Sprintf("%s, this command needs %d: upgrade %s first", strings.Join(why, ", "), need, strings.Join(ids, ", "))}
}

// gate refuses, before proposal, what needs a level above the cluster's:
// naming the servers to upgrade while some lack it, else saying to raise
// the cluster's level first. It runs on the leader.
func (s *Store) gate(ctx context.Context, need model.Level) error {
	have := s.fsm.clusterLevel()
	if need <= have {
		return nil
	}
	if err := s.supported(ctx, need); err != nil {
		return err
	}
	return &levelError{fmt.Sprintf("every server runs feature level %d or later but the cluster's level is %d: run fixpoint cluster upgrade first", need, have)}
}

// upgradeRequest is the body of POST /v1/raft/upgrade.
type upgradeRequest struct{}

// upgradeAnswer says the cluster's level after an upgrade.
type upgradeAnswer struct {
	Level model.Level `json:"level"`
}

// Upgrade raises the cluster's level to the highest level a server runs,
// once every server runs it; from then on no server may go back to an older
// build. Forwarded to the leader when this node does not lead; refused,
// naming the servers to upgrade, while some run an older build. This node
// checks first: a leader on a build that predates levels has no upgrade
// endpoint, and could only answer that it knows none.
func (s *Store) Upgrade(ctx context.Context) (model.Level, error) {
	if !s.IsLeader() {
		if err := s.supported(ctx, s.BuildLevel()); err != nil {
			return 0, fmt.Errorf("upgrade the cluster's feature level: %w", err)
		}
	}
	var lvl model.Level
	var t tried
	var b retrier
	for {
		err := s.attempt(&t,
			func() (err error) {
				lvl, err = s.raiseLevel(ctx)
				return err
			},
			func(addr string) error {
				var ans upgradeAnswer
				err := s.fwd.Forward(ctx, "POST", addr, "/v1/raft/upgrade", []byte("{}"), &ans)
				lvl = ans.Level
				return err
			})
		switch {
		case err == nil:
			return lvl, nil
		case !retryable(err):
			return 0, fmt.Errorf("upgrade the cluster's feature level: %w", err)
		}
		if why := t.gaveUp(err, s.hold()); why != nil {
			return 0, s.noLeaderError("upgrade", &t, why)
		}
		if !b.wait(ctx, s) {
			return 0, s.noLeaderError("upgrade", &t, ctx.Err())
		}
	}
}

// raiseLevel records, as the cluster's level, the highest level a server
// runs, once every server runs it. It holds levelMu, as admit does, so
// that no server of a lower level joins between the check and the record.
func (s *Store) raiseLevel(ctx context.Context) (model.Level, error) {
	s.levelMu.Lock()
	defer s.levelMu.Unlock()
	ms, err := s.Members(ctx)
	if err != nil {
		return 0, fmt.Errorf("check the servers' feature levels: %w", err)
	}
	want := s.BuildLevel()
	for _, m := range ms {
		want = max(want, m.Level)
	}
	if have := s.fsm.clusterLevel(); have >= want {
		return have, nil
	}
	if err := lagging(ms, want); err != nil {
		return 0, err
	}
	if err := s.applyLeveled(ctx, want, entryClusterLevel, levelRecord{Level: want, EnvUUID: s.defaultEnvUUID()}); err != nil {
		return 0, fmt.Errorf("record feature level %d: %w", want, err)
	}
	s.log.Info("raised the cluster's feature level", "level", want)
	return want, nil
}

// applyLeveled replicates one of raftstore's own entries (applyInternal),
// wrapped with the level it needs: its kind's in the level table, or need
// if higher.
func (s *Store) applyLeveled(ctx context.Context, need model.Level, tag byte, v any) error {
	kindLevel, ok := model.KindLevel(tagKind(tag))
	if !ok {
		return fmt.Errorf("entry type %d has no row in the level table", tag)
	}
	data, err := encodeEntry(tag, v)
	if err != nil {
		return err
	}
	return s.applyInternalData(ctx, leveled(max(need, kindLevel), data))
}

// raiseAlone records this build's level when the cluster is this node
// alone (a new cluster, or one of one server): no other build has to
// apply the log, so the level need not wait for an operator.
func (s *Store) raiseAlone(ctx context.Context) error {
	if s.fsm.clusterLevel() >= s.BuildLevel() {
		return nil
	}
	f := s.raft.GetConfiguration()
	if err := s.await(ctx, f); err != nil {
		return err
	}
	servers := f.Configuration().Servers
	if len(servers) != 1 || string(servers[0].ID) != s.cfg.NodeID || servers[0].Suffrage != raft.Voter {
		return nil
	}
	_, err := s.raiseLevel(ctx)
	return err
}

// checkJoinLevel refuses a server whose build cannot apply the log the
// cluster writes now.
func (s *Store) checkJoinLevel(req joinRequest) error {
	lvl, have := advertised(req.Level), s.fsm.clusterLevel()
	if lvl >= have {
		return nil
	}
	return &levelError{fmt.Sprintf("node %s runs feature level %d, below the cluster's level %d: it could not apply the log; start it on a build of level %d or later", req.ID, lvl, have, have)}
}

// decodeLevelRecord decodes an entryClusterLevel's body.
func decodeLevelRecord(body []byte) (levelRecord, error) {
	var r levelRecord
	if err := json.Unmarshal(body, &r); err != nil {
		return r, fmt.Errorf("decode cluster level: %w", err)
	}
	if r.Level < model.LevelBase {
		return r, fmt.Errorf("cluster level %d is below the base level %d", r.Level, model.LevelBase)
	}
	if r.EnvUUID != "" {
		if err := model.CheckUUID(r.EnvUUID); err != nil {
			return r, fmt.Errorf("cluster level: %w", err)
		}
	}
	return r, nil
}
