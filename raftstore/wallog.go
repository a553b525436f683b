package raftstore

import (
	"errors"
	"fmt"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"golang.org/x/sys/unix"
)

// walMetaSlack is the space, beyond one segment, that a reopen of the WAL
// wants free: its meta store commits the new segment before the segment
// file is made.
const walMetaSlack = 1 << 20

// walLog is the node's Raft log: a raft-wal WAL that it reopens when the
// WAL can no longer append.
//
// raft-wal seals a full segment in the append that fills it and starts the
// next one in the background; when that fails (on a full disk the next
// segment's file cannot be allocated, or its meta store cannot commit) it
// only logs, the sealed segment stays the tail, and every later append
// fails with wal.ErrSealed until the WAL is opened again. walLog reopens it once the
// disk has room for a segment, and retries the append: a node whose disk
// filled catches up when space is freed, with no restart. Opening repairs
// what the failed rotation left (see repairWAL).
//
// mu guards w: the log's calls share it, a reopen holds it alone. w is
// nil after a reopen closed the old WAL and could not open the new one;
// every call then tries the open again, and fails with broken until one
// succeeds.
type walLog struct {
	path    string
	segment int
	log     hclog.Logger

	mu     sync.RWMutex
	w      *wal.WAL
	gen    uint64 // counts opens, so that racing appends reopen once
	broken error  // why the last reopen failed
	closed bool
}

var _ raft.MonotonicLogStore = (*walLog)(nil)

// openWAL repairs and opens the WAL in path, in segments of segment bytes.
func openWAL(path string, segment int, log hclog.Logger) (*walLog, error) {
	w, err := openRepaired(path, segment, log)
	if err != nil {
		return nil, err
	}
	return &walLog{path: path, segment: segment, log: log, w: w}, nil
}

// errLogClosed is what the log's calls return after Close.
var errLogClosed = errors.New("the raft log is closed")

// current returns the open WAL, opening it again if a reopen left none.
// The caller holds mu for reading, and still does on return.
func (l *walLog) current() (*wal.WAL, uint64, error) {
	if l.w != nil {
		return l.w, l.gen, nil
	}
	if l.closed {
		return nil, l.gen, errLogClosed
	}
	gen := l.gen
	l.mu.RUnlock()
	err := l.reopen(gen)
	l.mu.RLock()
	if l.w != nil {
		return l.w, l.gen, nil
	}
	if err == nil {
		err = l.broken
	}
	if l.closed {
		err = errLogClosed
	}
	return nil, l.gen, fmt.Errorf("the raft log in %s is not open: %w", l.path, err)
}

// read runs f on the open WAL.
func (l *walLog) read(f func(*wal.WAL) error) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	w, _, err := l.current()
	if err != nil {
		return err
	}
	return f(w)
}

// FirstIndex implements raft.LogStore.
func (l *walLog) FirstIndex() (i uint64, err error) {
	err = l.read(func(w *wal.WAL) (err error) { i, err = w.FirstIndex(); return err })
	return i, err
}

// LastIndex implements raft.LogStore.
func (l *walLog) LastIndex() (i uint64, err error) {
	err = l.read(func(w *wal.WAL) (err error) { i, err = w.LastIndex(); return err })
	return i, err
}

// GetLog implements raft.LogStore.
func (l *walLog) GetLog(index uint64, out *raft.Log) error {
	return l.read(func(w *wal.WAL) error { return w.GetLog(index, out) })
}

// DeleteRange implements raft.LogStore.
func (l *walLog) DeleteRange(min, max uint64) error {
	return l.read(func(w *wal.WAL) error { return w.DeleteRange(min, max) })
}

// IsMonotonic implements raft.MonotonicLogStore: the WAL holds only a
// contiguous run of entries, so raft drops the log whole when it
// installs a snapshot.
func (l *walLog) IsMonotonic() bool { return true }

// StoreLog implements raft.LogStore.
func (l *walLog) StoreLog(e *raft.Log) error { return l.StoreLogs([]*raft.Log{e}) }

// StoreLogs implements raft.LogStore. An append that finds the tail
// sealed reopens the WAL, when the disk has room, and is tried once more.
func (l *walLog) StoreLogs(logs []*raft.Log) error {
	gen, err := l.store(logs)
	if !errors.Is(err, wal.ErrSealed) {
		return err
	}
	if rerr := l.reopen(gen); rerr != nil {
		return fmt.Errorf("append to the raft log: %w; %v", err, rerr)
	}
	_, err = l.store(logs)
	return err
}

func (l *walLog) store(logs []*raft.Log) (uint64, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	w, gen, err := l.current()
	if err != nil {
		return gen, err
	}
	return gen, w.StoreLogs(logs)
}

// reopen closes the WAL and opens it again, unless an open since gen
// did already, or the disk has no room for a new segment: then the WAL
// stays as it is and the error says why.
func (l *walLog) reopen(gen uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errLogClosed
	}
	if l.gen != gen {
		return nil
	}
	if err := l.roomForSegment(); err != nil {
		return err
	}
	if l.w != nil {
		l.log.Warn("the raft log's tail segment is sealed and no next one was started; opening the log again", "dir", l.path)
		if err := l.w.Close(); err != nil {
			l.log.Warn("close the raft log before opening it again", "dir", l.path, "err", err)
		}
		l.w = nil
	}
	w, err := openRepaired(l.path, l.segment, l.log)
	if err != nil {
		l.broken = err
		return err
	}
	l.w, l.broken = w, nil
	l.gen++
	l.log.Info("opened the raft log again", "dir", l.path)
	return nil
}

// roomForSegment reports an error when the file system holding the log
// has less room than a new segment needs.
func (l *walLog) roomForSegment() error {
	var st unix.Statfs_t
	if err := unix.Statfs(l.path, &st); err != nil {
		return fmt.Errorf("check free space for the raft log in %s: %w", l.path, err)
	}
	free := uint64(st.Bavail) * uint64(st.Bsize)
	if need := uint64(l.segment) + walMetaSlack; free < need {
		return fmt.Errorf("the disk holding the raft log in %s has %d bytes free, and a new log segment needs %d: free space on it, and the node catches up by itself", l.path, free, need)
	}
	return nil
}

// Close closes the WAL and its meta store.
func (l *walLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.w == nil {
		return nil
	}
	err := l.w.Close()
	l.w = nil
	return err
}
