package raftstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/backoff"
	"github.com/fixpoint/fixpoint/model/fault"
)

// joinRequest is the body of POST /v1/raft/join.
type joinRequest struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raft_addr"`
	HTTPAddr string `json:"http_addr"`
	// Rejoin is set by a node that already has state and only announces
	// its current addresses: it must not be added back if it was removed.
	Rejoin bool `json:"rejoin,omitempty"`
	// CSR is a new node's DER certificate request when the cluster issues
	// Raft certificates itself (see setupIdentity).
	CSR []byte `json:"csr,omitempty"`
	// Level and Version advertise the node's build; a build that
	// predates levels sends neither and runs model.LevelBase.
	Level   model.Level `json:"level,omitempty"`
	Version string      `json:"version,omitempty"`
}

// errNotMember answers a rejoin of a node that is not in the cluster.
var errNotMember = errors.New("not a member")

// conflictError is a join the leader refuses for good.
type conflictError struct{ msg string }

func (e *conflictError) Error() string { return e.msg }

// join makes this new node a voter through the members in cfg.Join. A
// node without a Raft certificate first asks for one (a join request with
// a CSR only issues it): the leader could not commit this node's addition
// before the node can answer on Raft.
func (s *Store) join(ctx context.Context) error {
	csr, err := s.certRequest()
	if err != nil {
		return fmt.Errorf("join: certificate request: %w", err)
	}
	if csr != nil {
		req := joinRequest{ID: s.cfg.NodeID, RaftAddr: s.raftAddr, HTTPAddr: s.cfg.HTTPAddr, CSR: csr, Level: s.BuildLevel(), Version: s.cfg.Version}
		if err := s.joinCall(ctx, req, func(ans joinAnswer) error {
			if err := s.adoptKeys(ans); err != nil {
				return err
			}
			return s.acceptJoin(ans)
		}); err != nil {
			return err
		}
	}
	req := joinRequest{ID: s.cfg.NodeID, RaftAddr: s.raftAddr, HTTPAddr: s.cfg.HTTPAddr, Level: s.BuildLevel(), Version: s.cfg.Version}
	if err := s.joinCall(ctx, req, s.adoptKeys); err != nil {
		return err
	}
	s.log.Info("joined the cluster")
	return nil
}

// joinCall sends req to the members in cfg.Join, tried in turn, with
// growing pauses between rounds, until one answers (handled by done), one
// refuses for good, or ctx ends.
func (s *Store) joinCall(ctx context.Context, req joinRequest, done func(joinAnswer) error) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("join: %w", err)
	}
	for round := 1; ; round++ {
		var errs []error
		for _, addr := range s.cfg.Join {
			var ans joinAnswer
			err := s.fwd.Call(ctx, "POST", addr, "/v1/raft/join", body, &ans)
			if err == nil {
				if err := done(ans); err != nil {
					return fmt.Errorf("join %s: %w", addr, err)
				}
				return nil
			}
			var fe *fault.Error
			if errors.As(err, &fe) && !fe.Kind.Retryable() {
				return fmt.Errorf("join %s: %w", addr, err)
			}
			errs = append(errs, fmt.Errorf("join %s: %w", addr, err))
			s.log.Debug("join attempt failed", "through", addr, "error", err)
		}
		t := time.NewTimer(joinWait.Delay(round))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("node %s could not join through %s: %w: %w",
				s.cfg.NodeID, strings.Join(s.cfg.Join, ", "), errors.Join(errs...), ctx.Err())
		}
	}
}

// adoptKeys keeps the cluster key a join answer brought, if this server
// has none; a leader without one (its data dir predates secrets) sends
// none, and the server goes on without.
func (s *Store) adoptKeys(ans joinAnswer) error {
	if len(ans.Keys) == 0 || !s.keys.Empty() {
		return nil
	}
	if err := s.keys.Adopt(ans.Keys); err != nil {
		return err
	}
	s.log.Info("received the cluster key through the join", "file", KeyFile)
	return nil
}

// joinWait spaces the rounds of a join: the members it names may still be
// starting.
var joinWait = backoff.Policy{Min: 100 * time.Millisecond, Max: 5 * time.Second, Jitter: 0.5}

// addMember makes a node a voter with the given addresses and records its
// HTTP address. It runs on the leader. A stale entry with the same id is
// updated in place (AddVoter keeps the id and takes the new address, which,
// unlike remove-then-add, needs no quorum of the old addresses); a stale
// entry of another id at the same Raft address is removed first. A
// request with a CSR only gets the node its certificate (see join).
func (s *Store) addMember(ctx context.Context, req joinRequest) (joinAnswer, error) {
	if req.ID == "" || req.RaftAddr == "" || req.HTTPAddr == "" {
		return joinAnswer{}, &badRequest{"join needs id, raft_addr and http_addr"}
	}
	if req.ID == s.cfg.NodeID && req.RaftAddr != s.raftAddr {
		return joinAnswer{}, &conflictError{fmt.Sprintf("node id %s is the leader's own id; give the joining node another --node-id", req.ID)}
	}
	if len(req.CSR) > 0 {
		if err := s.checkJoinLevel(req); err != nil {
			return joinAnswer{}, err
		}
		return s.signJoin(req)
	}
	if err := s.admit(ctx, req); err != nil {
		return joinAnswer{}, err
	}
	ans := joinAnswer{Leader: s.cfg.NodeID}
	if !req.Rejoin {
		ans.Keys = s.keys.Export()
	}
	return ans, nil
}

// admit makes the node a voter and records it. It holds levelMu, so that
// the cluster's level cannot rise past the node's meanwhile.
func (s *Store) admit(ctx context.Context, req joinRequest) error {
	s.levelMu.Lock()
	defer s.levelMu.Unlock()
	s.peers.record(model.NodeLevel{ID: req.ID, Version: req.Version, Level: advertised(req.Level)})
	if err := s.checkJoinLevel(req); err != nil {
		if !req.Rejoin {
			return err
		}
		// A member restarted on an older build: it is in the
		// configuration anyway, and stops at the first entry it cannot
		// apply; status says so.
		s.log.Warn("member rejoined on an older build", "id", req.ID, "error", err)
	}
	f := s.raft.GetConfiguration()
	if err := s.await(ctx, f); err != nil {
		return fmt.Errorf("read configuration: %w", err)
	}
	var same *raft.Server
	var clash []raft.Server
	for _, srv := range f.Configuration().Servers {
		switch {
		case string(srv.ID) == req.ID:
			srv := srv
			same = &srv
		case string(srv.Address) == req.RaftAddr:
			clash = append(clash, srv)
		}
	}
	if same == nil && req.Rejoin {
		return fmt.Errorf("node %s: %w of the cluster (it was removed): wipe its data dir and join it again", req.ID, errNotMember)
	}
	for _, srv := range clash {
		if string(srv.ID) == s.cfg.NodeID {
			return &conflictError{fmt.Sprintf("raft address %s is the leader's own (node %s)", req.RaftAddr, srv.ID)}
		}
		s.log.Info("removing a stale member at the joining node's address", "stale_id", srv.ID, "addr", srv.Address, "joining", req.ID)
		if err := s.await(ctx, s.raft.RemoveServer(srv.ID, 0, configTimeout)); err != nil {
			return fmt.Errorf("remove stale member %s at %s: %w", srv.ID, srv.Address, err)
		}
		if err := s.applyInternal(ctx, entryForget, nodeInfo{ID: string(srv.ID)}); err != nil {
			return fmt.Errorf("forget stale member %s: %w", srv.ID, err)
		}
	}
	if same == nil || string(same.Address) != req.RaftAddr || same.Suffrage != raft.Voter {
		s.log.Info("adding voter", "id", req.ID, "raft_addr", req.RaftAddr, "http_addr", req.HTTPAddr, "was", same)
		if err := s.await(ctx, s.raft.AddVoter(raft.ServerID(req.ID), raft.ServerAddress(req.RaftAddr), 0, configTimeout)); err != nil {
			return fmt.Errorf("add voter %s at %s: %w", req.ID, req.RaftAddr, err)
		}
	}
	want := nodeInfo{ID: req.ID, RaftAddr: req.RaftAddr, HTTPAddr: req.HTTPAddr}
	if have, ok := s.fsm.node(req.ID); !ok || have != want {
		if err := s.applyInternal(ctx, entryRegister, want); err != nil {
			return fmt.Errorf("register node %s: %w", req.ID, err)
		}
	}
	return nil
}

// leadershipLoop follows leadership changes. On gaining leadership it runs
// a barrier, so that reads see everything earlier leaders committed, and
// makes sure the registry holds this node's current HTTP address, so that
// followers can forward to it.
func (s *Store) leadershipLoop(notify <-chan bool) {
	defer s.wg.Done()
	// Each term's establish runs until leadership is lost or the store
	// closes; cancels holds its cancel functions.
	var cancels []context.CancelFunc
	stop := func() {
		for _, c := range cancels {
			c()
		}
		cancels = cancels[:0]
	}
	defer stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case leader := <-notify:
			stop()
			if !leader {
				s.log.Info("lost leadership")
				continue
			}
			ctx, cancel := context.WithCancel(s.ctx)
			cancels = append(cancels, cancel)
			term := s.raft.CurrentTerm()
			s.log.Info("gained leadership", "term", term)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.establish(ctx, term)
			}()
		}
	}
}

// establish prepares a new leader to serve.
func (s *Store) establish(ctx context.Context, term uint64) {
	if err := s.ensureBarrier(ctx, term); err != nil {
		s.log.Warn("leader barrier failed", "term", term, "error", err)
		return
	}
	if err := s.fixOwnAddress(ctx); err != nil {
		s.log.Warn("could not update this leader's raft address", "error", err)
	}
	defer s.establishLevel(ctx)
	want := nodeInfo{ID: s.cfg.NodeID, RaftAddr: s.raftAddr, HTTPAddr: s.cfg.HTTPAddr}
	if have, ok := s.fsm.node(s.cfg.NodeID); ok && have == want {
		return
	}
	if err := s.applyInternal(ctx, entryRegister, want); err != nil {
		s.log.Warn("could not register this leader's address", "error", err)
		return
	}
	s.log.Info("registered this node's addresses", "raft_addr", s.raftAddr, "http_addr", s.cfg.HTTPAddr)
}

// establishLevel raises the level of a cluster of this leader alone, and
// hands leadership over when this node stopped applying.
func (s *Store) establishLevel(ctx context.Context) {
	if s.fsm.haltedAt() != nil {
		s.handOff()
		return
	}
	if err := s.raiseAlone(ctx); err != nil {
		s.log.Warn("could not record this one-server cluster's feature level", "error", err)
	}
}

// fixOwnAddress updates the configuration when this leader was restarted
// on another Raft address: raft elects by id, so it leads, but followers
// would look for it at the old address after it fails.
func (s *Store) fixOwnAddress(ctx context.Context) error {
	f := s.raft.GetConfiguration()
	if err := s.await(ctx, f); err != nil {
		return err
	}
	for _, srv := range f.Configuration().Servers {
		if string(srv.ID) == s.cfg.NodeID && string(srv.Address) != s.raftAddr && srv.Suffrage == raft.Voter {
			s.log.Info("updating this leader's raft address", "from", srv.Address, "to", s.raftAddr)
			return s.await(ctx, s.raft.AddVoter(srv.ID, raft.ServerAddress(s.raftAddr), 0, configTimeout))
		}
	}
	return nil
}

// announceLoop keeps the cluster's record of this follower's addresses
// current. A node restarted on another HTTP port (or Raft port) would
// otherwise be unreachable for forwarding (or replication): it asks the
// leader to update its entry, as a rejoin that never re-adds a removed
// node.
func (s *Store) announceLoop() {
	defer s.wg.Done()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		if err := s.announce(); err != nil {
			s.log.Debug("announce failed", "error", err)
		}
		t.Reset(announceInterval/2 + rand.N(announceInterval))
	}
}

// announce sends one rejoin if this node's registry entry is out of date.
func (s *Store) announce() error {
	if s.IsLeader() {
		return nil // establish does it
	}
	want := nodeInfo{ID: s.cfg.NodeID, RaftAddr: s.raftAddr, HTTPAddr: s.cfg.HTTPAddr}
	if have, ok := s.fsm.node(s.cfg.NodeID); ok && have == want {
		return nil
	}
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return err
	}
	member := false
	for _, srv := range f.Configuration().Servers {
		member = member || string(srv.ID) == s.cfg.NodeID
	}
	if !member {
		// Not joined yet, or removed: a rejoin would be refused anyway.
		return nil
	}
	body, err := json.Marshal(joinRequest{ID: s.cfg.NodeID, RaftAddr: s.raftAddr, HTTPAddr: s.cfg.HTTPAddr, Rejoin: true, Level: s.BuildLevel(), Version: s.cfg.Version})
	if err != nil {
		return err
	}
	// The leader if known; else anyone this node has heard of, who
	// forwards to the leader: with a new Raft address this node may never
	// hear from the leader until the cluster learns it.
	var targets []string
	if addr := s.LeaderHTTP(); addr != "" {
		targets = append(targets, addr)
	}
	for id, n := range s.knownNodes() {
		if id != s.cfg.NodeID && n.HTTPAddr != "" {
			targets = append(targets, n.HTTPAddr)
		}
	}
	targets = append(targets, s.cfg.Join...)
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	var errs []error
	for _, addr := range targets {
		if err := s.fwd.Call(ctx, "POST", addr, "/v1/raft/join", body, nil); err != nil {
			errs = append(errs, fmt.Errorf("rejoin %s: %w", addr, err))
			continue
		}
		s.log.Info("announced this node's addresses", "through", addr, "raft_addr", s.raftAddr, "http_addr", s.cfg.HTTPAddr)
		return nil
	}
	return errors.Join(errs...)
}

// knownNodes is the registry including entries that are in the local log
// but not applied yet. A restarted node applies its log only once it hears
// from a leader; if it moved to another Raft address, the leader can not
// reach it, and the unapplied tail is all it knows about where the others
// are.
func (s *Store) knownNodes() map[string]nodeInfo {
	nodes := s.fsm.registry()
	last, err := s.logs.LastIndex()
	if err != nil {
		return nodes
	}
	for i := s.fsm.appliedIndex() + 1; i <= last && i > 0; i++ {
		var l raft.Log
		if err := s.logs.GetLog(i, &l); err != nil {
			continue
		}
		if l.Type != raft.LogCommand || len(l.Data) == 0 {
			continue
		}
		var n nodeInfo
		switch l.Data[0] {
		case entryRegister:
			if json.Unmarshal(l.Data[1:], &n) == nil {
				nodes[n.ID] = n
			}
		case entryForget:
			if json.Unmarshal(l.Data[1:], &n) == nil {
				delete(nodes, n.ID)
			}
		}
	}
	return nodes
}

// badRequest is a malformed request.
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }
