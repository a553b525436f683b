package raftstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	wal "github.com/hashicorp/raft-wal"
	walfs "github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
)

// walRepairAdvice says what an operator does with a log that cannot be
// opened or repaired.
const walRepairAdvice = "this node's copy of the raft log cannot be used: " +
	"remove the node from the cluster (`fixpoint cluster remove NODE` on another member), " +
	"move its data dir aside and start it again with --join; " +
	"a one-node cluster restores its last backup (`fixpoint cluster snapshot restore FILE`)"

// openRepaired repairs the WAL in path (see repairWAL) and opens it. A
// panic inside raft-wal becomes an error that says what to do.
func openRepaired(path string, segmentSize int, log hclog.Logger) (w *wal.WAL, err error) {
	meta := &metadb.BoltMetaDB{}
	defer func() {
		if p := recover(); p != nil {
			_ = meta.Close()
			w, err = nil, fmt.Errorf("open the raft log in %s: raft-wal panicked: %v; %s", path, p, walRepairAdvice)
		}
	}()
	if err := repairWAL(path, segmentSize, log); err != nil {
		return nil, err
	}
	// The WAL closes meta when it closes.
	w, err = wal.Open(path, wal.WithSegmentSize(segmentSize), wal.WithMetaStore(meta), wal.WithLogger(log.Named("wal")))
	if err != nil {
		_ = meta.Close()
		return nil, fmt.Errorf("open the raft log in %s: %w", path, err)
	}
	return w, nil
}

// repairWAL mends, before raft-wal opens it, what raft-wal leaves in the
// WAL in path that it cannot read or append to:
//
//   - a sealed segment without an index block: raft-wal v0.4.0 sealed the
//     tail that way when Raft deleted a suffix of the log, and every read
//     of it fails ("sealed segment has no index block"). Its file still
//     holds every entry, each behind a commit frame: raft-wal's own
//     segment writer recovers them, as it recovers a tail after a crash,
//     and writes the index block after the last commit. Entries past the
//     segment's last index stay in the file, out of reach of reads.
//   - a tail whose file is sealed while the meta store still has it open:
//     the append that filled it sealed it, and the rotation that marks it
//     sealed and starts the next segment failed (a full disk) or never ran
//     (a crash). raft-wal opens such a tail as it is, and every append
//     then fails with "segment is sealed". The rotation is finished here:
//     the tail is marked sealed and a next segment recorded, whose file
//     raft-wal creates as it does after a crash.
//
// A segment that cannot be mended (its file is gone, or holds fewer
// entries than the log counts on) is an error that changes nothing and
// says what to do. Every committed entry is kept: nothing is truncated.
func repairWAL(path string, segmentSize int, log hclog.Logger) error {
	if _, err := os.Stat(filepath.Join(path, metadb.FileName)); errors.Is(err, fs.ErrNotExist) {
		return nil // a new WAL: raft-wal creates it
	}
	meta := &metadb.BoltMetaDB{}
	defer meta.Close()
	st, err := meta.Load(path)
	if err != nil {
		return fmt.Errorf("read the raft log's meta data in %s: %w", path, err)
	}
	filer := segment.NewFiler(path, walfs.New())
	changed := false
	for i := range st.Segments {
		si := &st.Segments[i]
		switch {
		case !si.SealTime.IsZero() && si.IndexStart == 0:
			if err := indexSegment(filer, si); err != nil {
				return fmt.Errorf("the raft log in %s: segment %s (entries %d-%d) is sealed without an index block, and %v; %s",
					path, segment.FileName(*si), si.MinIndex, si.MaxIndex, err, walRepairAdvice)
			}
			log.Warn("rebuilt the index of a raft log segment sealed without one", "dir", path,
				"segment", segment.FileName(*si), "first", si.MinIndex, "last", si.MaxIndex)
			changed = true
		case si.SealTime.IsZero() && i == len(st.Segments)-1:
			next, err := finishRotation(filer, si, st.NextSegmentID, segmentSize)
			if err != nil {
				return fmt.Errorf("the raft log in %s: recover its tail segment %s: %v; %s",
					path, segment.FileName(*si), err, walRepairAdvice)
			}
			if next != nil {
				log.Warn("the raft log's tail segment was sealed but not rotated; starting the next one", "dir", path,
					"segment", segment.FileName(*si), "last", si.MaxIndex)
				st.Segments = append(st.Segments, *next)
				st.NextSegmentID++
				changed = true
			}
		}
	}
	if !changed {
		return nil
	}
	if err := meta.CommitState(st); err != nil {
		return fmt.Errorf("record the repaired raft log in %s: %w", path, err)
	}
	return nil
}

// indexSegment writes the index block of the sealed segment si, which has
// none, and records where it starts.
func indexSegment(filer *segment.Filer, si *types.SegmentInfo) error {
	sw, err := filer.RecoverTail(*si)
	if err != nil {
		return fmt.Errorf("its file cannot be read: %w", err)
	}
	defer sw.Close()
	if last := sw.LastIndex(); last < si.MaxIndex {
		return fmt.Errorf("its file holds entries only up to %d", last)
	}
	start, err := sw.ForceSeal()
	if err != nil {
		return fmt.Errorf("writing the index failed: %w", err)
	}
	si.IndexStart = start
	return nil
}

// finishRotation checks the unsealed tail segment si: when its file is
// sealed, si is marked sealed and the next segment, numbered id, is
// returned.
func finishRotation(filer *segment.Filer, si *types.SegmentInfo, id uint64, segmentSize int) (*types.SegmentInfo, error) {
	sw, err := filer.RecoverTail(*si)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // raft-wal creates it
	}
	if err != nil {
		return nil, err
	}
	defer sw.Close()
	sealed, start, err := sw.Sealed()
	if err != nil || !sealed {
		return nil, err
	}
	now := time.Now()
	si.SealTime, si.IndexStart, si.MaxIndex = now, start, sw.LastIndex()
	return &types.SegmentInfo{
		ID:         id,
		BaseIndex:  si.MaxIndex + 1,
		MinIndex:   si.MaxIndex + 1,
		Codec:      si.Codec,
		SizeLimit:  uint32(segmentSize),
		CreateTime: now,
	}, nil
}
