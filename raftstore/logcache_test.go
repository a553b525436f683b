package raftstore

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// TestLogCacheBoundedInBytes: entries far larger in all than the cache's
// byte bound go through it into a real WAL; the cache holds at most its
// bound, the Go heap retains about that much of them (the WAL keeps none
// in memory), and every entry, cached or evicted, reads back whole.
func TestLogCacheBoundedInBytes(t *testing.T) {
	const maxBytes, entry, n = 4 << 20, 256 << 10, 128 // eight times the cache's bound through it
	data := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, entry) }
	// fill stores the n entries into s, four a batch, and says how much
	// the heap grew.
	fill := func(s raft.LogStore) int64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := 1; i <= n; i += 4 {
			var batch []*raft.Log
			for j := i; j < i+4; j++ {
				batch = append(batch, &raft.Log{Index: uint64(j), Term: 1, Type: raft.LogCommand, Data: data(j)})
			}
			if err := s.StoreLogs(batch); err != nil {
				t.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		return int64(after.HeapInuse) - int64(before.HeapInuse)
	}
	open := func() *walLog {
		w, err := openWAL(t.TempDir(), 64<<20, hclog.NewNullLogger())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Close() })
		return w
	}
	// What the WAL itself keeps (its index, its write buffer).
	wal := fill(open())
	c, err := newLogCache(512, maxBytes, open())
	if err != nil {
		t.Fatal(err)
	}
	grown := fill(c)
	entries, held := c.cached()
	if held > maxBytes || entries == 0 || entries > maxBytes/entry {
		t.Fatalf("the cache holds %d entries, %d bytes; want some, within %d bytes", entries, held, maxBytes)
	}
	// Tolerance: what the WAL alone keeps, and a quarter of the bound
	// for the collector's accounting; a cache bounded by its count of
	// entries would retain all of them.
	if grown > wal+maxBytes+maxBytes/4 {
		t.Fatalf("the heap grew by %d bytes storing %d entries through a cache of %d bytes (the WAL alone: %d)", grown, n, maxBytes, wal)
	}
	t.Logf("heap grown: %d bytes through the cache, %d by the WAL alone, bound %d", grown, wal, maxBytes)
	for i := 1; i <= n; i++ {
		var l raft.Log
		if err := c.GetLog(uint64(i), &l); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if l.Index != uint64(i) || !bytes.Equal(l.Data, data(i)) {
			t.Fatalf("entry %d reads back as index %d, %d bytes", i, l.Index, len(l.Data))
		}
	}
	// An entry larger than the bound is not cached, and evicts nothing it
	// need not.
	big := &raft.Log{Index: n + 1, Term: 1, Type: raft.LogCommand, Data: make([]byte, maxBytes+1)}
	if err := c.StoreLogs([]*raft.Log{big}); err != nil {
		t.Fatal(err)
	}
	if e, b := c.cached(); e != entries || b != held {
		t.Fatalf("an entry over the bound changed the cache: %d entries, %d bytes; was %d, %d", e, b, entries, held)
	}
	if err := c.DeleteRange(n-3, n+1); err != nil {
		t.Fatal(err)
	}
	if e, b := c.cached(); e != 0 || b != 0 {
		t.Fatalf("after a delete the cache holds %d entries, %d bytes", e, b)
	}
}
