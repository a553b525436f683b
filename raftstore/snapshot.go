package raftstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/model"
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

// fsmSnapshot is a frozen copy of the state waiting to be written.
type fsmSnapshot struct {
	index   uint64
	level   model.Level
	nodes   map[string]nodeInfo
	cluster *model.Cluster
	logs    *model.BoundedDump[model.LogLine]
	events  *model.BoundedDump[model.Event]
	// growth hears the snapshot's size once it is written.
	growth *logGrowth
}

// Persist streams the document to the sink: the encoded state is never
// whole in memory.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	w := &sizedWriter{w: sink}
	if err := s.writeTo(w); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("write snapshot %s: %w", sink.ID(), err)
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("close snapshot %s: %w", sink.ID(), err)
	}
	if s.growth != nil {
		s.growth.snapshot.Store(w.n)
	}
	return nil
}

// writeTo streams the document to w.
func (s *fsmSnapshot) writeTo(w io.Writer) error {
	if err := writeDocument(w, s.index, s.level, s.nodes, s.cluster, s.logs, s.events); err != nil {
		return fmt.Errorf("at index %d: %w", s.index, err)
	}
	return nil
}

// Release drops the copy.
func (s *fsmSnapshot) Release() { s.cluster, s.nodes, s.logs, s.events = nil, nil, nil, nil }
