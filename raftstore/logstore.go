package raftstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"github.com/hashicorp/raft-wal/migrate"
)

// The Raft log lives in a write-ahead log (hashicorp/raft-wal, in wal/),
// the stable store (term and vote) in raft.db (raft-boltdb). A bbolt
// commit syncs twice, its pages and then its meta page; an append to the
// WAL syncs once. On two shared cores that was a third of a write's CPU
// and most of its latency: 64 writers through the API did 1.2 to 1.7 times
// the writes per second with the WAL (bench/README.md).

// walDir is where a node keeps its log, under its data dir.
const walDir = "wal"

// walSegmentSize is the size of a log segment file, allocated when it is
// created: small enough that a node of a small environment does not hold
// a large file it does not use, large enough that rotations are rare.
const walSegmentSize = 16 << 20

// migrateBatchBytes is how much log a migration appends at a time.
const migrateBatchBytes = 4 << 20

// openLog opens the node's Raft log in dir/wal, in segments of segment
// bytes. A data dir written by an
// older fixpoint keeps its log in raft.db: its entries are copied into a
// new WAL first, which only then takes the name wal, and are dropped from
// raft.db after. A crash anywhere in between leaves either no wal (the
// copy starts over) or a complete one (raft.db's entries are dropped
// again).
func openLog(dir string, bolt *raftboltdb.BoltStore, segment int, log hclog.Logger) (*walLog, error) {
	path := filepath.Join(dir, walDir)
	partial := path + ".partial"
	if err := os.RemoveAll(partial); err != nil {
		return nil, fmt.Errorf("remove an interrupted log migration: %w", err)
	}
	_, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		last, err := bolt.LastIndex()
		if err != nil {
			return nil, fmt.Errorf("read raft.db's last index: %w", err)
		}
		if last > 0 {
			if err := migrateLog(bolt, partial, path, segment, log); err != nil {
				return nil, err
			}
		} else if err := os.Mkdir(path, 0o700); err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		} else if err := syncDir(dir); err != nil {
			// Without it a crash could lose the directory, and with it
			// entries the WAL had synced and acknowledged.
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w, err := openWAL(path, segment, log)
	if err != nil {
		return nil, err
	}
	if err := readAll(w, path); err != nil {
		_ = w.Close()
		return nil, err
	}
	if err := dropBoltLog(bolt); err != nil {
		_ = w.Close()
		return nil, err
	}
	return w, nil
}

// readAll reads every entry of the log in path. Raft reads every entry
// past its last snapshot when it starts, scanning for configuration
// changes, and panics on one it cannot read: here that is an error that
// says what to do.
func readAll(l raft.LogStore, path string) error {
	first, err := l.FirstIndex()
	if err != nil {
		return fmt.Errorf("read the raft log in %s: %w", path, err)
	}
	last, err := l.LastIndex()
	if err != nil {
		return fmt.Errorf("read the raft log in %s: %w", path, err)
	}
	for i := first; i <= last && i > 0; i++ {
		var e raft.Log
		if err := l.GetLog(i, &e); err != nil {
			return fmt.Errorf("the raft log in %s: entry %d (of %d-%d) cannot be read: %w; %s", path, i, first, last, err, walRepairAdvice)
		}
	}
	return nil
}

// migrateLog copies raft.db's entries into a WAL in partial and renames it
// to path once every entry is synced.
func migrateLog(bolt *raftboltdb.BoltStore, partial, path string, segment int, log hclog.Logger) error {
	first, _ := bolt.FirstIndex()
	last, _ := bolt.LastIndex()
	log.Info("moving the raft log from raft.db into a write-ahead log", "first", first, "last", last, "to", path)
	if err := os.Mkdir(partial, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", partial, err)
	}
	w, err := openWAL(partial, segment, log)
	if err != nil {
		return err
	}
	err = migrate.CopyLogs(context.Background(), w, bolt, migrateBatchBytes, nil)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copy raft.db's log (entries %d-%d) into %s: %w", first, last, partial, err)
	}
	if err := os.Rename(partial, path); err != nil {
		return fmt.Errorf("rename %s: %w", partial, err)
	}
	return syncDir(filepath.Dir(path))
}

// dropBoltLog deletes the entries an older fixpoint kept in raft.db, once
// they are in the WAL.
func dropBoltLog(bolt *raftboltdb.BoltStore) error {
	last, err := bolt.LastIndex()
	if err != nil || last == 0 {
		return err
	}
	first, err := bolt.FirstIndex()
	if err != nil {
		return err
	}
	if err := bolt.DeleteRange(first, last); err != nil {
		return fmt.Errorf("drop raft.db's old log (entries %d-%d, now in the WAL): %w", first, last, err)
	}
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
