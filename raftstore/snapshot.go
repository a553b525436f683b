package raftstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/raft"
)

// maxBackup bounds a backup read for restore. The state holds no charm
// archives, so real ones are far smaller.
const maxBackup = 256 << 20

// Snapshot makes this node take a Raft snapshot now (and compact its log).
// Having nothing new to snapshot is not an error.
func (s *Store) Snapshot(ctx context.Context) error {
	err := s.await(ctx, s.raft.Snapshot())
	if errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("snapshot node %s: %w", s.cfg.NodeID, err)
	}
	s.log.Info("took a snapshot", "index", s.Index())
	return nil
}

// SaveBackup writes a backup of the state to w: a linearizable read, so it
// holds every write acknowledged before the call, copied under the read
// lock, so it is consistent, and streamed as one JSON document.
func (s *Store) SaveBackup(ctx context.Context, w io.Writer) error {
	if err := s.Linearize(ctx); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := s.fsm.frozen().writeTo(w); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return nil
}

// RestoreBackup replaces the whole cluster's state with a backup made by
// SaveBackup. It goes through the log as one entry, so every node replaces
// its state at the same index, indexes keep growing, and watchers get
// reset. The cluster's membership is kept. Forwarded to the leader when
// this node does not lead.
func (s *Store) RestoreBackup(ctx context.Context, r io.Reader) error {
	raw, err := io.ReadAll(io.LimitReader(r, maxBackup+1))
	if err != nil {
		return fmt.Errorf("restore: read backup: %w", err)
	}
	if len(raw) > maxBackup {
		return &badRequest{fmt.Sprintf("restore: backup is larger than %d bytes", maxBackup)}
	}
	doc, err := decodeDocument(bytes.NewReader(raw))
	if err != nil {
		return &badRequest{fmt.Sprintf("restore: not a fixpoint backup: %v", err)}
	}
	var t tried
	var b retrier
	for {
		err := s.attempt(&t,
			func() error { return s.applyInternal(ctx, entryReplace, doc) },
			func(addr string) error { return s.fwd.Forward(ctx, "POST", addr, "/v1/raft/restore", raw, nil) })
		switch {
		case err == nil:
			s.log.Info("restored backup", "backup_index", doc.Index, "index", s.Index())
			return nil
		case !definite(err):
			// A replace entry carries no request id: proposing it again
			// after an unclear outcome could undo writes made since.
			return fmt.Errorf("restore: %w (check the state before trying again)", err)
		}
		if why := t.gaveUp(err, s.hold()); why != nil {
			return s.noLeaderError("restore", &t, why)
		}
		if !b.wait(ctx, s) {
			return s.noLeaderError("restore", &t, ctx.Err())
		}
	}
}
