package raftstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// editMeta changes the meta data of the closed WAL in path with f.
func editMeta(t *testing.T, path string, f func(st *types.PersistentState)) {
	t.Helper()
	meta := &metadb.BoltMetaDB{}
	defer meta.Close()
	st, err := meta.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	f(&st)
	if err := meta.CommitState(st); err != nil {
		t.Fatal(err)
	}
}

// readMeta returns the meta data of the closed WAL in path.
func readMeta(t *testing.T, path string) types.PersistentState {
	t.Helper()
	meta := &metadb.BoltMetaDB{}
	defer meta.Close()
	st, err := meta.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// sealWithoutIndex does to the closed WAL in path what raft-wal v0.4.0
// did when Raft deleted the entries after keep from its tail segment: it
// marked the tail sealed at keep, with no index block in the file (the
// file still holds every entry it had), and started a new segment after
// keep.
func sealWithoutIndex(t *testing.T, path string, keep uint64, segmentSize int) {
	t.Helper()
	editMeta(t, path, func(st *types.PersistentState) {
		tail := &st.Segments[len(st.Segments)-1]
		if !tail.SealTime.IsZero() {
			t.Fatalf("the tail segment %+v is sealed already", *tail)
		}
		tail.SealTime, tail.MaxIndex = time.Now(), keep
		st.Segments = append(st.Segments, types.SegmentInfo{
			ID: st.NextSegmentID, BaseIndex: keep + 1, MinIndex: keep + 1,
			Codec: tail.Codec, SizeLimit: uint32(segmentSize), CreateTime: time.Now(),
		})
		st.NextSegmentID++
	})
}

// rawWAL opens the WAL in path with raft-wal alone, as main's openLog
// did: no repair. Its Close closes the meta store too, which raft-wal
// v0.4.0's did not.
func rawWAL(t *testing.T, path string, segmentSize int) *rawLog {
	t.Helper()
	meta := &metadb.BoltMetaDB{}
	w, err := wal.Open(path, wal.WithSegmentSize(segmentSize), wal.WithMetaStore(meta), wal.WithLogger(hclog.NewNullLogger()))
	if err != nil {
		meta.Close()
		t.Fatal(err)
	}
	return &rawLog{WAL: w, meta: meta}
}

type rawLog struct {
	*wal.WAL
	meta *metadb.BoltMetaDB
}

func (l *rawLog) Close() error {
	err := l.WAL.Close()
	if merr := l.meta.Close(); err == nil {
		err = merr
	}
	return err
}

// v040DataDir makes, in path, the log a node running raft-wal v0.4.0 left
// after Raft deleted entries 81-100 and the leader sent 81-90 again:
// entries 1-80 in a segment sealed without its index, 81-90 after it.
func v040DataDir(t *testing.T, path string, segmentSize int) {
	t.Helper()
	l, err := openWAL(path, segmentSize, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	storeEach(t, l, 1, 100, "old")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	sealWithoutIndex(t, path, 80, segmentSize)
	w := rawWAL(t, path, segmentSize)
	storeEach(t, w, 81, 90, "new")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// The fixture is what broke: raft-wal cannot read entry 1 after a
	// restart.
	w = rawWAL(t, path, segmentSize)
	var e raft.Log
	err = w.GetLog(1, &e)
	if cerr := w.Close(); cerr != nil {
		t.Fatal(cerr)
	}
	if err == nil || !strings.Contains(err.Error(), "sealed segment has no index block") {
		t.Fatalf("reading entry 1 of the v0.4.0 fixture: %v, want raft-wal's \"sealed segment has no index block\"", err)
	}
}

// TestASegmentSealedWithoutItsIndexIsRepaired: a data dir that raft-wal
// v0.4.0 left with a segment sealed without its index opens with every
// entry readable, takes appends, and opens again.
func TestASegmentSealedWithoutItsIndexIsRepaired(t *testing.T) {
	path := t.TempDir()
	const segmentSize = 64 << 10
	v040DataDir(t, path, segmentSize)

	l, err := openWAL(path, segmentSize, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("open the v0.4.0 data dir: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	wantBounds(t, l, 1, 90)
	wantEntries(t, l, 1, 80, "old")
	wantEntries(t, l, 81, 90, "new")
	storeEach(t, l, 91, 95, "newer")

	l = reopenWAL(t, l, path, segmentSize)
	wantBounds(t, l, 1, 95)
	wantEntries(t, l, 1, 80, "old")
	wantEntries(t, l, 81, 90, "new")
	wantEntries(t, l, 91, 95, "newer")
}

// TestASegmentSealedWithoutItsIndexThatLostEntriesIsRefused: when the
// file of such a segment no longer holds every entry the log counts on,
// the log is not opened, the error says what to do, and nothing changes.
func TestASegmentSealedWithoutItsIndexThatLostEntriesIsRefused(t *testing.T) {
	path := t.TempDir()
	const segmentSize = 64 << 10
	v040DataDir(t, path, segmentSize)
	broken := readMeta(t, path).Segments[0]
	file := filepath.Join(path, segment.FileName(broken))
	// Cut the file after its first few entries.
	if err := os.Truncate(file, 512); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(path, metadb.FileName))
	if err != nil {
		t.Fatal(err)
	}

	for range 2 {
		_, err := openWAL(path, segmentSize, hclog.NewNullLogger())
		if err == nil {
			t.Fatal("a log missing committed entries opened")
		}
		for _, want := range []string{segment.FileName(broken), "sealed without an index block", "entries 1-80", "cluster remove", "--join"} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("the error does not say %q: %v", want, err)
			}
		}
		t.Logf("refused: %v", err)
	}
	after, err := os.ReadFile(filepath.Join(path, metadb.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Fatal("the refused open changed the log's meta data")
	}
}

// unrotate does to the closed WAL in path what a failed rotation leaves:
// its last segment, empty, was never recorded and the one before it, whose
// file is sealed, is still the tail.
func unrotate(t *testing.T, path string) {
	t.Helper()
	editMeta(t, path, func(st *types.PersistentState) {
		n := len(st.Segments)
		last := st.Segments[n-1]
		if err := os.Remove(filepath.Join(path, segment.FileName(last))); err != nil {
			t.Fatal(err)
		}
		st.Segments = st.Segments[:n-1]
		tail := &st.Segments[n-2]
		tail.SealTime, tail.MaxIndex, tail.IndexStart = time.Time{}, 0, 0
		st.NextSegmentID--
	})
}

// entriesPerSegment is how many of storeEach's entries fill the first
// segment of segmentSize bytes.
func entriesPerSegment(t *testing.T, segmentSize int) uint64 {
	t.Helper()
	path := t.TempDir()
	l, err := openWAL(path, segmentSize, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(1); ; i++ {
		storeEach(t, l, i, i, "old")
		if files, _ := filepath.Glob(filepath.Join(path, "*.wal")); len(files) == 2 {
			break
		}
		if i > 10000 {
			t.Fatalf("no second segment of %d bytes after %d entries", segmentSize, i)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return readMeta(t, path).Segments[0].MaxIndex
}

// TestASealedTailThatWasNotRotatedIsRotatedOnOpen: the append that fills
// a segment seals its file, and a background rotation then records it
// sealed and starts the next; when that failed (a full disk) or never ran
// (a crash), raft-wal v0.4.2 opens the sealed tail as it is and refuses
// every append. Opened here, the log finishes the rotation.
func TestASealedTailThatWasNotRotatedIsRotatedOnOpen(t *testing.T) {
	path := t.TempDir()
	const segmentSize = 8 << 10
	last := entriesPerSegment(t, segmentSize)
	l, err := openWAL(path, segmentSize, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	storeEach(t, l, 1, last, "old")
	rafttest.Eventually(t, time.Minute, "the second segment", func() error {
		if files, _ := filepath.Glob(filepath.Join(path, "*.wal")); len(files) != 2 {
			return fmt.Errorf("%d segment files", len(files))
		}
		return nil
	})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	unrotate(t, path)

	w := rawWAL(t, path, segmentSize)
	err = w.StoreLogs(walEntries(last+1, last+1, "new"))
	w.Close()
	if !errors.Is(err, wal.ErrSealed) {
		t.Fatalf("raft-wal alone appends to the unrotated tail with %v, want %v: the fixture does not break it", err, wal.ErrSealed)
	}

	l, err = openWAL(path, segmentSize, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	storeEach(t, l, last+1, last+20, "new")
	wantBounds(t, l, 1, last+20)
	wantEntries(t, l, 1, last, "old")
	wantEntries(t, l, last+1, last+20, "new")
	l = reopenWAL(t, l, path, segmentSize)
	wantEntries(t, l, 1, last, "old")
	wantEntries(t, l, last+1, last+20, "new")
}

// TestALogWithAnUnreadableEntryIsRefusedAtStart: raft reads every entry of
// the log when it starts and panics on one it cannot read; a node whose
// log lost part of a segment file does not start, and the error says
// which entry and what to do.
func TestALogWithAnUnreadableEntryIsRefusedAtStart(t *testing.T) {
	dir := t.TempDir()
	const segmentSize = 8 << 10
	bolt := openBolt(t, dir)
	defer bolt.Close()
	l, err := openLog(dir, bolt, segmentSize, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	storeEach(t, l, 1, 400, "old")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, walDir)
	sealed := readMeta(t, path).Segments[0]
	if sealed.SealTime.IsZero() {
		t.Fatalf("400 entries fit in one segment of %d bytes", segmentSize)
	}
	// The segment's index block is gone; its header is not.
	if err := os.Truncate(filepath.Join(path, segment.FileName(sealed)), int64(sealed.IndexStart)); err != nil {
		t.Fatal(err)
	}

	_, err = openLog(dir, bolt, segmentSize, hclog.NewNullLogger())
	if err == nil {
		t.Fatal("a log with unreadable entries opened")
	}
	for _, want := range []string{"entry 1 (of 1-400) cannot be read", "cluster remove"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("the error does not say %q: %v", want, err)
		}
	}
	t.Logf("refused: %v", err)
}
