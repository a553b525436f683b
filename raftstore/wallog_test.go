package raftstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"golang.org/x/sys/unix"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// smallDisk mounts a tmpfs of size bytes on a new temp dir and returns
// it; the test is skipped when that is not possible (not root, no mount
// permission). It is unmounted at cleanup, after cleanups registered
// later.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("filling a disk needs a small tmpfs, and mounting one needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("filling a disk needs a small tmpfs, and mounting one on %s failed: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fill writes file until the disk holding it is full.
func fill(t *testing.T, file string) {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for written := 0; ; written += len(chunk) {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatalf("fill %s: %v", file, err)
		}
		if written > 1<<30 {
			t.Fatalf("wrote 1 GiB to %s and the disk is not full", file)
		}
	}
}

// free frees n bytes of file.
func free(t *testing.T, file string, n int64) {
	t.Helper()
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(file, max(fi.Size()-n, 0)); err != nil {
		t.Fatal(err)
	}
}

// TestALogOnAFullDiskCatchesUpWhenSpaceIsFreed: the disk holding the log
// fills, appends fail, reads go on, and as space is freed the same open
// log appends again, with no restart, and keeps every entry. A segment
// file is allocated whole when it is made, so appends fail at the end of
// a segment, twice over:
//
//   - the append that fills the segment writes past its allocation, and
//     fails. raft-wal v0.4.0 kept the segment marked sealed after that,
//     and every later append failed with "segment is sealed"; v0.4.2
//     rolls the segment back, and the append succeeds once a little
//     space is free.
//   - that append seals the segment, and the next segment cannot be
//     allocated: raft-wal v0.4.2 too leaves the sealed segment as the
//     tail, and every later append fails with "segment is sealed". The
//     log opens the WAL again once a segment fits.
func TestALogOnAFullDiskCatchesUpWhenSpaceIsFreed(t *testing.T) {
	disk := smallDisk(t, "4m")
	path := filepath.Join(disk, walDir)
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	const segmentSize = 256 << 10
	l, err := openWAL(path, segmentSize, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	filler := filepath.Join(disk, "filler")
	fill(t, filler)

	tag := strings.Repeat("x", 1000)
	var failed uint64
	for i := uint64(1); i < 4*segmentSize/1000; i++ {
		if err = l.StoreLogs(walEntries(i, i, tag)); err != nil {
			failed = i
			break
		}
	}
	if failed < 2 {
		t.Fatalf("appends to a full disk: entry %d failed (%v), want the first to succeed and one at the end of the segment to fail", failed, err)
	}
	t.Logf("append %d to a full disk: %v", failed, err)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append %d to a full disk failed with %v, want %v", failed, err, syscall.ENOSPC)
	}
	wantEntries(t, l, 1, failed-1, tag)

	// Room for the end of the segment, not for the next one.
	free(t, filler, 64<<10)
	if err := l.StoreLogs(walEntries(failed, failed, tag)); err != nil {
		t.Fatalf("append %d again with 64 KiB free: %v", failed, err)
	}
	err = l.StoreLogs(walEntries(failed+1, failed+1, tag))
	t.Logf("append %d with no room for a segment: %v", failed+1, err)
	if !errors.Is(err, wal.ErrSealed) || !strings.Contains(err.Error(), "free space") {
		t.Fatalf("append %d with no room for a segment: %v, want %v and a word on free space", failed+1, err, wal.ErrSealed)
	}
	wantEntries(t, l, 1, failed, tag)

	// Space is freed, but the WAL does not open again (a file raft-wal
	// takes for a corrupt segment): the log says why, and tries again on
	// each call until it opens.
	stray := filepath.Join(path, "stray.wal")
	if err := os.WriteFile(stray, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := l.StoreLogs(walEntries(failed+1, failed+1, tag)); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("append %d with a WAL that does not open: %v, want raft-wal's error", failed+1, err)
	}
	var e raft.Log
	if err := l.GetLog(1, &e); err == nil || !strings.Contains(err.Error(), "not open") {
		t.Fatalf("read with a WAL that does not open: %v", err)
	}
	if err := os.Remove(stray); err != nil {
		t.Fatal(err)
	}
	wantEntries(t, l, 1, failed, tag)

	// Raft sends the entry again; the same log takes it, and more, across
	// segments.
	last := failed + 2*segmentSize/1000
	storeEach(t, l, failed+1, last, tag)
	wantBounds(t, l, 1, last)
	wantEntries(t, l, 1, last, tag)

	l = reopenWAL(t, l, path, segmentSize)
	wantBounds(t, l, 1, last)
	wantEntries(t, l, 1, last, tag)
}

// TestAFollowerOnAFullDiskCatchesUpWhenSpaceIsFreed: a follower whose data
// dir fills falls behind the others, and catches up by itself, with no
// restart, once space is freed: first only room for the end of its
// segment, then room for more.
func TestAFollowerOnAFullDiskCatchesUpWhenSpaceIsFreed(t *testing.T) {
	log := testLogger(t)
	ctx := ctxT(t, 120*time.Second)
	disk := smallDisk(t, "8m") // before the node, so that it closes first
	nodes := make([]*node, 3)
	for i := range nodes {
		nodes[i] = newNode(t, log, fmt.Sprintf("n%d", i+1))
		nodes[i].segment = 64 << 10
	}
	full := nodes[2]
	full.dir = filepath.Join(disk, "data")
	nodes[0].start(true, nil)
	nodes[1].start(false, []string{nodes[0].httpAddr})
	full.start(false, []string{nodes[0].httpAddr})
	rafttest.Eventually(t, time.Minute, "three voters", func() error { return voters(nodes, 3) })
	leader := waitLeader(t, nodes...)
	if leader == full {
		next := others(nodes, full)[0]
		if err := leader.s.raft.LeadershipTransferToServer(raft.ServerID(next.id), raft.ServerAddress(next.raftAddr)).Error(); err != nil {
			t.Fatalf("leadership transfer: %v", err)
		}
	}
	n := 0
	write := func() {
		t.Helper()
		n++
		name := fmt.Sprintf("m%d", n)
		for {
			l, err := leaderOf(others(nodes, full)...)
			if err == nil {
				if _, err = l.s.Apply(ctx, machineCmd(name, "10.4.0.1")); err == nil {
					return
				}
			}
			if ctx.Err() != nil {
				t.Fatalf("apply %s: %v", name, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	write()
	rafttest.Eventually(t, time.Minute, "convergence", func() error { return converged(t, nodes...) })

	filler := filepath.Join(disk, "filler")
	fill(t, filler)
	// Write until the follower's log stops, at the end of its segment, and
	// falls far behind.
	var stuck uint64
	for n < 3000 && stuck == 0 {
		write()
		l, err := leaderOf(others(nodes, full)...)
		if err != nil {
			continue
		}
		ahead, _ := l.s.wal.LastIndex()
		if last, _ := full.s.wal.LastIndex(); ahead > last+200 {
			stuck = last
		}
	}
	if stuck == 0 {
		t.Fatalf("%s kept up with %d writes on a full disk", full.id, n)
	}
	t.Logf("%s stopped at %d, after %d writes", full.id, stuck, n)

	// Room for the end of the segment, not for the next one: the
	// follower takes a few entries, then stops again.
	free(t, filler, 64<<10)
	rafttest.Eventually(t, time.Minute, full.id+" takes the end of its segment", func() error {
		if last, _ := full.s.wal.LastIndex(); last <= stuck {
			return fmt.Errorf("%s's log ends at %d", full.id, last)
		}
		return nil
	})
	if err := converged(t, nodes...); err == nil {
		t.Fatalf("%s caught up with no room for a new segment: the test would not need one", full.id)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	rafttest.Eventually(t, 60*time.Second, full.id+" catches up", func() error { return converged(t, nodes...) })
	write()
	rafttest.Eventually(t, time.Minute, "convergence after a write", func() error { return converged(t, nodes...) })
	if got := machines(full.s); len(got) != n {
		t.Fatalf("%s holds %d machines, want %d", full.id, len(got), n)
	}
}
