package raftstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/model"
)

// Apply replicates a command and returns what the model answered. On the
// leader it goes into the log here; on a follower it is forwarded to the
// leader's /v1/raft/apply. While there is no leader, or the leader changes
// under it, it retries with jitter until ctx ends, or until this node has
// known no leader for leaderHold (7 s): then the error errors.Is
// ErrNoLeader. cmd.RequestID (filled with a random id when empty) makes
// every retry apply at most once. A command the model refuses returns an
// error that errors.Is ErrRefused, and is not retried.
func (s *Store) Apply(ctx context.Context, cmd *model.Command) (*model.Response, error) {
	if cmd == nil {
		return nil, errors.New("apply: nil command")
	}
	s.timeSecrets(cmd)
	if cmd.RequestID == "" {
		cmd.RequestID = newRequestID()
	} else {
		bindRequest(cmd)
	}
	relayed := 0
	if cmd.Op == model.OpLogs && cmd.Logs != nil && !s.IsLeader() {
		// Held to the budget before it is relayed (logbudget.go).
		kept, dropped := s.relayMeter.admit(cmd.Logs, time.Now())
		if kept == nil {
			return &model.Response{Dropped: dropped}, nil
		}
		trimmed := *cmd
		trimmed.Logs, relayed = kept, dropped
		cmd = &trimmed
	}
	data, need, err := proposal(cmd)
	if err != nil {
		return nil, err
	}
	// Named only when an error needs it: a write that succeeds costs no
	// formatting.
	what := func() string { return fmt.Sprintf("apply %s (request %s)", cmd.Op, cmd.RequestID) }
	var resp *model.Response
	var t tried
	var b retrier
	for {
		err := s.attempt(&t,
			func() error {
				if err := s.gate(ctx, need); err != nil {
					return err
				}
				out, err := s.propose(ctx, cmd, data)
				if err == nil {
					resp, _ = out.(*model.Response)
				}
				return err
			},
			func(addr string) error {
				var out model.Response
				err := s.forwardApply(ctx, addr, cmd, &out)
				resp = &out
				return err
			})
		switch {
		case err == nil:
			if relayed > 0 && resp != nil {
				resp.Dropped += relayed
			}
			return resp, nil
		case errors.Is(err, ErrRefused):
			return nil, err
		case ctx.Err() != nil && !errors.Is(err, ErrNoLeader):
			// The entry may be in the log already: say so rather than
			// blaming the leader.
			return nil, fmt.Errorf("%s: %w (it may still be applied; retrying with the same request id is safe)", what(), ctx.Err())
		case !retryable(err):
			return nil, fmt.Errorf("%s: %w", what(), err)
		}
		if why := t.gaveUp(err, s.hold()); why != nil {
			return nil, s.noLeaderError(what(), &t, why)
		}
		s.log.Debug("apply: retrying", "op", cmd.Op, "request", cmd.RequestID, "error", err)
		if !b.wait(ctx, s) {
			return nil, s.noLeaderError(what(), &t, ctx.Err())
		}
	}
}

// timeSecrets asks a command that makes or changes secrets to record
// their wall-clock times, on this node's clock, once the cluster's level
// records them: a cluster below it keeps no times, so that every server
// of it applies the entry alike.
func (s *Store) timeSecrets(cmd *model.Command) {
	if cmd.SecretTimes || s.fsm.clusterLevel() < model.LevelRecorded || !cmd.ChangesSecrets() {
		return
	}
	if cmd.Time == 0 {
		cmd.Time = time.Now().UnixNano()
	}
	cmd.SecretTimes = true
}

// applyLocal appends an encoded entry on this node, which must lead, and
// waits until it is applied. The FSM's answer comes back as the result; an
// error answer is a refusal.
func (s *Store) applyLocal(ctx context.Context, data []byte) (any, error) {
	timeout := enqueueTimeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	if h := s.fsm.haltedAt(); h != nil {
		// It could not tell what its own entry did: let a node that
		// applies lead.
		s.handOff()
		return nil, h
	}
	if len(data) > raft.SuggestedMaxDataSize {
		// Large entries delay heartbeats and can cost leadership.
		s.log.Warn("large log entry", "bytes", len(data), "type", data[0])
	}
	f := s.raft.Apply(data, timeout)
	if err := s.await(ctx, f); err != nil {
		return nil, err
	}
	switch v := f.Response().(type) {
	case *haltError:
		// Committed, but what it did is known only to the nodes that
		// apply it: not a refusal.
		s.handOff()
		return nil, v
	case error:
		return nil, fmt.Errorf("%w: %w", ErrRefused, v)
	default:
		return v, nil
	}
}

// propose appends cmd, encoded as data, on this node, which must lead,
// and waits until it is applied: what applyLocal does, once a debug-log
// batch is held to its sources' budgets (logbudget.go). A batch of which
// nothing fits is answered without an entry.
func (s *Store) propose(ctx context.Context, cmd *model.Command, data []byte) (any, error) {
	if cmd.Op != model.OpLogs || cmd.Logs == nil {
		return s.applyLocal(ctx, data)
	}
	kept, dropped := s.logMeter.admit(cmd.Logs, time.Now())
	if kept == nil {
		return &model.Response{Dropped: dropped}, nil
	}
	if dropped > 0 || len(kept.Lines) != len(cmd.Logs.Lines) {
		// Lines dropped, or a count of earlier ones added.
		trimmed := *cmd
		trimmed.Logs = kept
		var err error
		if data, _, err = proposal(&trimmed); err != nil {
			return nil, err
		}
	}
	out, err := s.applyLocal(ctx, data)
	if resp, ok := out.(*model.Response); ok && err == nil {
		resp.Dropped = dropped
	}
	return out, err
}

// forwardApply sends a command to the leader's /v1/raft/apply.
func (s *Store) forwardApply(ctx context.Context, addr string, cmd *model.Command, out *model.Response) error {
	body, err := json.Marshal(cmd)
	if err != nil {
		return fmt.Errorf("encode command: %w", err)
	}
	err = s.fwd.Forward(ctx, "POST", addr, "/v1/raft/apply", body, out)
	if errors.Is(err, ErrRefused) {
		// Worded as a refusal on this node would be.
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return err
}

// applyInternal replicates one of raftstore's own entries. It must run on
// the leader; it retries only while the entry certainly did not make it
// into the log, because these entries carry no request id.
func (s *Store) applyInternal(ctx context.Context, tag byte, v any) error {
	data, err := encodeEntry(tag, v)
	if err != nil {
		return err
	}
	return s.applyInternalData(ctx, data)
}

// applyInternalData is applyInternal of an encoded entry.
func (s *Store) applyInternalData(ctx context.Context, data []byte) error {
	var b retrier
	for {
		if !s.IsLeader() {
			return fmt.Errorf("node %s: %w", s.cfg.NodeID, raft.ErrNotLeader)
		}
		_, err := s.applyLocal(ctx, data)
		if err == nil || !errors.Is(err, raft.ErrEnqueueTimeout) {
			return err
		}
		if !b.wait(ctx, s) {
			return err
		}
	}
}

// bindRequest binds a caller's request id to what it asks
// (model.CheckRequest), on every path into the log: the id is stored with
// the command's digest, and the same id with another command is refused
// rather than taken for a retry. A digest the sender worked out is kept.
func bindRequest(cmd *model.Command) {
	if cmd.RequestID != "" && cmd.Digest == "" {
		cmd.Digest = cmd.Fingerprint()
	}
}

// proposal checks cmd as the FSM will, before it goes anywhere near the
// log, and encodes it, wrapped with the feature level it needs when that
// is above the base (leveled): a refused or oversized command never grows
// the log of any node. The leader's gate checks the level.
func proposal(cmd *model.Command) ([]byte, model.Level, error) {
	if err := cmd.Validate(); err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	need, ok := cmd.Level()
	if !ok {
		return nil, 0, fmt.Errorf("%w: command %s has no feature level in this build", ErrRefused, model.Quote(string(cmd.Op), 40))
	}
	data, err := encodeEntry(entryCommand, cmd)
	if err != nil {
		return nil, 0, err
	}
	if len(data) > model.MaxCommandBytes {
		return nil, 0, fmt.Errorf("%w: %s command of %d bytes is larger than the %d-byte limit", ErrRefused, cmd.Op, len(data), model.MaxCommandBytes)
	}
	return leveled(need, data), need, nil
}

// handOff makes a leader that stopped applying hand leadership to a node
// that applies, once at a time.
func (s *Store) handOff() {
	if !s.IsLeader() || !s.handingOff.CompareAndSwap(false, true) {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.handingOff.Store(false)
		s.log.Warn("handing leadership over: this node stopped applying the log")
		if err := s.raft.LeadershipTransfer().Error(); err != nil {
			s.log.Warn("leadership transfer failed", "error", err)
		}
	}()
}
