package raftstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/model"
)

// Member is one server of the cluster as this node sees it.
type Member struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raft_addr"`
	HTTPAddr string `json:"http_addr,omitempty"`
	// Role is leader, follower, candidate, nonvoter, or unknown when the
	// node did not answer.
	Role string `json:"role"`
	// LastContact is how long ago the member last heard from the leader,
	// by its own account (0 for the leader); for a member that does not
	// answer (Unreachable), how long ago the leader last heard from it,
	// when the leader could say.
	LastContact time.Duration `json:"last_contact"`
	// Unreachable says the member did not answer: it is gone, or cut
	// off. LastContact is then the leader's account, 0 if none.
	Unreachable bool `json:"unreachable,omitempty"`
	// AppliedIndex is the member's last applied index.
	AppliedIndex uint64 `json:"applied_index"`
	Voter        bool   `json:"voter"`
	// Version and Level are the member's build and its feature level, as
	// it says them; a build that predates levels says no version and
	// runs model.LevelBase. Level is 0 for a member that did not answer.
	Version string      `json:"version,omitempty"`
	Level   model.Level `json:"level,omitempty"`
	// ClusterLevel is the cluster's feature level as the member's log
	// recorded it (0 from a build that predates levels).
	ClusterLevel model.Level `json:"cluster_level,omitempty"`
	// Halted says why the member stopped applying the log, if it did.
	Halted string `json:"halted,omitempty"`
	// Memory is the member's memory condition, "" when nothing is wrong.
	Memory string `json:"memory,omitempty"`
}

// nodeStatus is the answer of GET /v1/raft/status: one node about itself.
type nodeStatus struct {
	ID           string `json:"id"`
	Role         string `json:"role"`
	Leader       string `json:"leader,omitempty"`
	Term         uint64 `json:"term"`
	AppliedIndex uint64 `json:"applied_index"`
	// LastIndex is the last entry in this node's log, applied or not.
	LastIndex   uint64        `json:"last_index"`
	LastContact time.Duration `json:"last_contact"`
	// Unreachable is, from the leader, how long ago each follower that
	// stopped answering its heartbeats last answered (Store.Unreachable).
	Unreachable map[string]time.Duration `json:"unreachable,omitempty"`
	// Version and Level advertise this node's build on every status
	// answer, which is how the others learn it (levels.go); ClusterLevel
	// is the level its log recorded; Halted why it stopped applying.
	Version      string      `json:"version,omitempty"`
	Level        model.Level `json:"level,omitempty"`
	ClusterLevel model.Level `json:"cluster_level,omitempty"`
	Halted       string      `json:"halted,omitempty"`
	// Memory is the node's memory condition (Config.Memory).
	Memory string `json:"memory,omitempty"`
}

// status describes this node.
func (s *Store) status() nodeStatus {
	lid, _ := s.leader()
	st := nodeStatus{
		ID:           s.cfg.NodeID,
		Role:         roleOf(s.raft.State()),
		Leader:       lid,
		Term:         s.raft.CurrentTerm(),
		AppliedIndex: s.Index(),
		LastIndex:    s.raft.LastIndex(),
		LastContact:  s.LastContact(),
		Version:      s.cfg.Version,
		Level:        s.BuildLevel(),
		ClusterLevel: s.fsm.clusterLevel(),
	}
	if h := s.fsm.haltedAt(); h != nil {
		st.Halted = h.reason
	}
	st.Memory = s.memoryCondition()
	now := time.Now()
	for id, t := range s.Unreachable() {
		if st.Unreachable == nil {
			st.Unreachable = map[string]time.Duration{}
		}
		st.Unreachable[id] = now.Sub(t)
	}
	return st
}

func roleOf(st raft.RaftState) string {
	switch st {
	case raft.Leader:
		return "leader"
	case raft.Follower:
		return "follower"
	case raft.Candidate:
		return "candidate"
	}
	return "unknown"
}

// Members lists the servers of the cluster's configuration as this node
// knows it, each with its own account of its role, contact and index
// (asked over HTTP, in parallel; a member that does not answer in time is
// "unknown", unreachable, with the leader's account of its last contact).
func (s *Store) Members(ctx context.Context) ([]Member, error) {
	f := s.raft.GetConfiguration()
	if err := s.await(ctx, f); err != nil {
		return nil, fmt.Errorf("members: %w", err)
	}
	reg := s.fsm.registry()
	servers := f.Configuration().Servers
	out := make([]Member, len(servers))
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	// The leader's account of the members that stopped answering it.
	var silent map[string]time.Duration
	var silentMu sync.Mutex
	for i, srv := range servers {
		m := Member{
			ID:       string(srv.ID),
			RaftAddr: string(srv.Address),
			HTTPAddr: reg[string(srv.ID)].HTTPAddr,
			Voter:    srv.Suffrage == raft.Voter,
			Role:     "unknown",
		}
		if m.ID == s.cfg.NodeID {
			st := s.status()
			m.HTTPAddr, m.Role, m.AppliedIndex, m.LastContact = s.cfg.HTTPAddr, st.Role, st.AppliedIndex, st.LastContact
			m.Version, m.Level, m.ClusterLevel, m.Halted, m.Memory = st.Version, st.Level, st.ClusterLevel, st.Halted, st.Memory
			if st.Role == "leader" {
				silentMu.Lock()
				silent = st.Unreachable
				silentMu.Unlock()
			}
		}
		out[i] = m
		if m.ID == s.cfg.NodeID || m.HTTPAddr == "" {
			continue
		}
		wg.Add(1)
		go func(m *Member) {
			defer wg.Done()
			var st nodeStatus
			if err := s.fwd.Call(ctx, "GET", m.HTTPAddr, "/v1/raft/status", nil, &st); err != nil {
				s.log.Debug("member status", "id", m.ID, "error", err)
				return
			}
			m.Role, m.AppliedIndex, m.LastContact = st.Role, st.AppliedIndex, st.LastContact
			m.Version, m.Level, m.ClusterLevel, m.Halted, m.Memory = st.Version, advertised(st.Level), st.ClusterLevel, st.Halted, st.Memory
			s.peers.record(model.NodeLevel{ID: m.ID, Version: m.Version, Level: m.Level, Halted: m.Halted, Memory: m.Memory})
			if st.Role == "leader" {
				silentMu.Lock()
				silent = st.Unreachable
				silentMu.Unlock()
			}
		}(&out[i])
	}
	wg.Wait()
	for i := range out {
		m := &out[i]
		if m.Role == "unknown" {
			// Its own account is missing, and a zero would read as
			// "just now".
			m.Unreachable, m.LastContact = true, silent[m.ID]
		}
		if !m.Voter && m.Role != "unknown" {
			m.Role = "nonvoter"
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Remove takes a server out of the cluster, through the leader (forwarded
// when this node does not lead). Retries while there is no leader, until
// ctx ends or no leader was known for leaderHold.
func (s *Store) Remove(ctx context.Context, id string) error {
	if id == "" {
		return errors.New("remove: a node id is required")
	}
	body, err := json.Marshal(removeRequest{ID: id})
	if err != nil {
		return err
	}
	what := "remove node " + id
	var t tried
	var b retrier
	for {
		err := s.attempt(&t,
			func() error { return s.removeMember(ctx, id) },
			func(addr string) error { return s.fwd.Forward(ctx, "POST", addr, "/v1/raft/remove", body, nil) })
		switch {
		case err == nil:
			return nil
		case !retryable(err):
			return fmt.Errorf("%s: %w", what, err)
		}
		if why := t.gaveUp(err, s.hold()); why != nil {
			return s.noLeaderError(what, &t, why)
		}
		if !b.wait(ctx, s) {
			return s.noLeaderError(what, &t, ctx.Err())
		}
	}
}

// removeRequest is the body of POST /v1/raft/remove.
type removeRequest struct {
	ID string `json:"id"`
}

// removeMember removes a server on the leader and forgets its address.
func (s *Store) removeMember(ctx context.Context, id string) error {
	f := s.raft.GetConfiguration()
	if err := s.await(ctx, f); err != nil {
		return fmt.Errorf("read configuration: %w", err)
	}
	found, voter, voters := false, false, 0
	var ids []string
	for _, srv := range f.Configuration().Servers {
		found = found || string(srv.ID) == id
		ids = append(ids, string(srv.ID))
		if srv.Suffrage == raft.Voter {
			voters++
			voter = voter || string(srv.ID) == id
		}
	}
	if !found {
		return &notFound{fmt.Sprintf("node %s is not a member (members: %v)", id, ids)}
	}
	if voter && voters == 1 {
		// Raft would be left with nobody to commit anything, this
		// removal included: refuse rather than wedge the cluster.
		return &conflictError{fmt.Sprintf("cannot remove the last voter %s: the control plane would have no quorum; join another node first, or stop this one instead", id)}
	}
	// Forget first when removing this leader itself: after the removal
	// commits it no longer leads and could not write the registry.
	if id == s.cfg.NodeID {
		if err := s.applyInternal(ctx, entryForget, nodeInfo{ID: id}); err != nil {
			return fmt.Errorf("forget node %s: %w", id, err)
		}
	}
	if err := s.await(ctx, s.raft.RemoveServer(raft.ServerID(id), 0, configTimeout)); err != nil {
		return fmt.Errorf("remove server %s: %w", id, err)
	}
	s.log.Info("removed member", "id", id)
	if id != s.cfg.NodeID {
		if err := s.applyInternal(ctx, entryForget, nodeInfo{ID: id}); err != nil {
			// The member is gone; a stale registry entry only costs a
			// wasted address in error messages.
			s.log.Warn("could not forget removed member's address", "id", id, "error", err)
		}
	}
	return nil
}

// notFound is a request about something that does not exist.
type notFound struct{ msg string }

func (e *notFound) Error() string { return e.msg }
