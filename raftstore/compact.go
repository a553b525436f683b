package raftstore

import (
	"errors"
	"io"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// Raft decides snapshots by counts of entries (SnapshotThreshold) and
// keeps TrailingLogs entries after one, but fixpoint's entries range from
// a heartbeat's few bytes to batches of results near the command limit:
// a log of large batches could grow to gigabytes before a count says a
// snapshot is due, and every restart or joining node would replay all of
// it. So the log's bytes decide too. A snapshot is due once the entries
// applied since the last one hold as many bytes as that snapshot did, and
// at least snapshotFloor: what snapshots cost is then amortised against
// what the log grew by, and the disk holds about two states' worth of
// snapshot and log. Before it, the entries kept after it are set so that
// they hold about trailBytes at the recent entries' mean size, within
// [minTrailing, the configured TrailingLogs].

// Bounds of the byte rule (the Store's Config may lower them in tests).
const (
	snapshotFloor = 64 << 20
	trailBytes    = 32 << 20
	minTrailing   = 64
)

// logGrowth counts what the FSM applied since the last snapshot froze the
// state, and the size of that snapshot. Safe for concurrent use.
type logGrowth struct {
	bytes, entries atomic.Int64
	// mean is the mean entry size (bytes) up to the last snapshot that
	// followed any, 0 before.
	mean atomic.Int64
	// snapshot is the last snapshot's size, in bytes, 0 before one.
	snapshot atomic.Int64
	floor    int64
	// due holds a token once a snapshot is due.
	due chan struct{}
}

func newLogGrowth(floor int64) *logGrowth {
	return &logGrowth{floor: floor, due: make(chan struct{}, 1)}
}

// applied counts an entry of n bytes, and says a snapshot is due once the
// entries since the last one outgrow its bound.
func (g *logGrowth) applied(n int) {
	g.entries.Add(1)
	if g.bytes.Add(int64(n)) < max(g.floor, g.snapshot.Load()) {
		return
	}
	select {
	case g.due <- struct{}{}:
	default:
	}
}

// frozen starts a new count: a snapshot holds everything applied so far.
func (g *logGrowth) frozen() {
	if n := g.entries.Swap(0); n > 0 {
		g.mean.Store(g.bytes.Load()/n + 1)
	}
	g.bytes.Store(0)
}

// trailing is how many entries to keep after a snapshot so that they hold
// about budget bytes at the mean size of those applied since the last
// one (or before it, if none since), within [minTrailing, most].
func (g *logGrowth) trailing(budget int64, most uint64) uint64 {
	mean := g.mean.Load()
	if n := g.entries.Load(); n > 0 {
		mean = g.bytes.Load()/n + 1
	}
	if mean <= 0 {
		return most
	}
	keep := uint64(max(budget/mean, minTrailing))
	return min(keep, max(most, minTrailing))
}

// snapshotFloor is the least growth of the log, in bytes, that makes a
// snapshot due.
func (c Config) snapshotFloor() int64 {
	if c.snapshotBytes > 0 {
		return c.snapshotBytes
	}
	return snapshotFloor
}

// trailBytes is about what the entries a snapshot keeps hold.
func (c Config) trailBytes() int64 {
	if c.trailingBytes > 0 {
		return c.trailingBytes
	}
	return trailBytes
}

// sizedWriter counts the bytes written through it.
type sizedWriter struct {
	w io.Writer
	n int64
}

func (s *sizedWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.n += int64(n)
	return n, err
}

// compactLoop takes a snapshot whenever the log's bytes say one is due
// (logGrowth), having first set how many entries it keeps.
func (s *Store) compactLoop() {
	defer s.wg.Done()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.fsm.growth.due:
		}
		rc := s.raft.ReloadableConfig()
		rc.TrailingLogs = s.fsm.growth.trailing(s.cfg.trailBytes(), s.trailingMost)
		if err := s.raft.ReloadConfig(rc); err != nil {
			s.log.Warn("could not set the log kept after a snapshot", "error", err)
		}
		// A node shutting down ends the snapshot it was taking: nothing
		// to warn of.
		if err := s.raft.Snapshot().Error(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) && !errors.Is(err, raft.ErrRaftShutdown) {
			s.log.Warn("snapshot the log's growth asked for failed", "error", err)
		}
	}
}
