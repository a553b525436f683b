package raftstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/model"
)

// View runs fn with the local state under a read lock: a stale read, as
// fresh as this node's last applied entry (st.Index == Index()). fn must
// neither keep st nor change it, and should be quick: entries wait to be
// applied meanwhile. fn may call the Store's accessors (Index, IsLeader,
// LeaderHTTP, ...) but not Apply, which would wait for itself. Call
// Linearize first for a linearizable read.
func (s *Store) View(fn func(st *model.State) error) error {
	if h := s.fsm.haltedAt(); h != nil {
		// Its state stopped at an entry the others applied: stale.
		return h
	}
	s.fsm.mu.RLock()
	defer s.fsm.mu.RUnlock()
	return fn(s.fsm.cluster.Default)
}

// Changes is the default environment's journal (engine.Store): what the
// entries after since changed, false when it does not reach back that
// far. Call it inside View, whose read lock guards it.
func (s *Store) Changes(since uint64) ([]model.Touched, bool) { return s.fsm.changes("", since) }

// Linearize makes the next View linearizable: it returns once this node has
// applied every entry committed before the call. The leader proves it still
// leads (VerifyLeader, after a barrier once per term) and takes its commit
// index; a follower asks the leader for that index over HTTP. Retries while
// there is no leader, until ctx ends or no leader was known for leaderHold.
func (s *Store) Linearize(ctx context.Context) error {
	var t tried
	var b retrier
	for {
		var idx uint64
		err := s.attempt(&t,
			func() (err error) {
				idx, err = s.readIndex(ctx)
				return err
			},
			func(addr string) error {
				var out readIndexAnswer
				err := s.fwd.Call(ctx, "GET", addr, "/v1/raft/readindex", nil, &out)
				idx = out.Index
				return err
			})
		if err == nil {
			return s.waitApplied(ctx, idx)
		}
		if !retryable(err) {
			return fmt.Errorf("linearize: %w", err)
		}
		if why := t.gaveUp(err, s.hold()); why != nil {
			return s.noLeaderError("linearize", &t, why)
		}
		if !b.wait(ctx, s) {
			return s.noLeaderError("linearize", &t, ctx.Err())
		}
	}
}

// readIndexAnswer is the answer of /v1/raft/readindex.
type readIndexAnswer struct {
	Index uint64 `json:"index"`
}

// readIndex is the Raft thesis' read index (§6.4) on the leader: an index
// such that every entry committed before the call is at or below it, taken
// while this node provably leads.
func (s *Store) readIndex(ctx context.Context) (uint64, error) {
	if h := s.fsm.haltedAt(); h != nil {
		return 0, h
	}
	term := s.raft.CurrentTerm()
	if err := s.ensureBarrier(ctx, term); err != nil {
		return 0, err
	}
	idx := s.raft.CommitIndex()
	if err := s.await(ctx, s.raft.VerifyLeader()); err != nil {
		return 0, err
	}
	if s.raft.CurrentTerm() != term {
		return 0, raft.ErrLeadershipLost
	}
	return idx, nil
}

// ensureBarrier makes sure a barrier of this term has been applied: only
// then is a new leader's commit index known to cover everything earlier
// leaders committed.
func (s *Store) ensureBarrier(ctx context.Context, term uint64) error {
	if s.readyTerm.Load() == term {
		return nil
	}
	if err := s.await(ctx, s.raft.Barrier(barrierTimeout)); err != nil {
		return err
	}
	if s.raft.CurrentTerm() != term {
		return raft.ErrLeadershipLost
	}
	s.readyTerm.Store(term)
	return nil
}

// waitApplied blocks until the FSM reflects every entry up to idx.
func (s *Store) waitApplied(ctx context.Context, idx uint64) error {
	// The FSM wakes us on its own entries; raft's no-op and barrier
	// entries never reach it, so poll as well.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		_, _, changed := s.fsm.watch()
		if s.appliedThrough(idx) {
			return nil
		}
		if h := s.fsm.haltedAt(); h != nil {
			return h
		}
		select {
		case <-changed:
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("linearize: waiting for node %s to apply index %d (at %d): %w", s.cfg.NodeID, idx, s.Index(), ctx.Err())
		case <-s.ctx.Done():
			return ErrClosed
		}
	}
}

// appliedThrough reports whether the FSM reflects every entry up to idx.
func (s *Store) appliedThrough(idx uint64) bool {
	return appliedThrough(idx, s.fsm.appliedIndex(), s.raft.AppliedIndex(), s.logs)
}

// appliedThrough reports whether an FSM that has seen entries up to fsm
// reflects every entry up to idx, raft having handed it entries up to
// handed. The FSM's own index only counts the entries it sees, so an idx
// that falls on a trailing run of no-op or barrier entries is reached
// once raft has passed idx and the FSM has applied the last entry before
// that run; raft counts an entry as applied when it hands it to the FSM,
// not when the FSM is done, so only logs can say there is nothing in
// between.
//
// An entry the log no longer holds was compacted: the node holds a
// snapshot past it, and raft restores snapshots into the FSM before it
// drops logs. Any other failure to read the log (a node closing under
// the read) says nothing, and the read must wait: taking it for
// compaction answered linearizable reads from an FSM still behind, on a
// leader crashed by TestLinearizable's nemesis mid-read.
func appliedThrough(idx, fsm, handed uint64, logs raft.LogStore) bool {
	if fsm >= idx {
		return true
	}
	if handed < idx {
		return false
	}
	for i := idx; i > fsm; i-- {
		var l raft.Log
		if err := logs.GetLog(i, &l); err != nil {
			return errors.Is(err, raft.ErrLogNotFound)
		}
		if l.Type == raft.LogCommand || l.Type == raft.LogConfiguration {
			return false
		}
	}
	return true
}
