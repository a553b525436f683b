package raftstore

import (
	"bytes"
	"runtime"
	"testing"
	"weak"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// TestLogCacheBoundedInBytes: entries far larger in all than the cache's
// byte bound go through it into a real WAL; the cache holds at most its
// bound, nothing (the WAL, the cache's evictions) keeps the bytes of an
// entry it does not hold, which weak pointers to every entry's bytes see
// after a collection whatever else the process allocates, and every
// entry, cached or evicted, reads back whole.
func TestLogCacheBoundedInBytes(t *testing.T) {
	const maxBytes, entry, n = 4 << 20, 256 << 10, 128 // eight times the cache's bound through it
	data := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, entry) }
	w, err := openWAL(t.TempDir(), 64<<20, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	c, err := newLogCache(512, maxBytes, w)
	if err != nil {
		t.Fatal(err)
	}
	alive := make([]weak.Pointer[byte], n+1)
	for i := 1; i <= n; i += 4 {
		var batch []*raft.Log
		for j := i; j < i+4; j++ {
			d := data(j)
			alive[j] = weak.Make(&d[0])
			batch = append(batch, &raft.Log{Index: uint64(j), Term: 1, Type: raft.LogCommand, Data: d})
		}
		if err := c.StoreLogs(batch); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	kept := 0
	for i := 1; i <= n; i++ {
		if alive[i].Value() != nil {
			kept++
			c.mu.RLock()
			if l := c.slots[uint64(i)%uint64(len(c.slots))]; l == nil || l.Index != uint64(i) {
				t.Errorf("entry %d is not cached and its bytes are still held", i)
			}
			c.mu.RUnlock()
		}
	}
	if kept*entry > maxBytes {
		t.Fatalf("%d entries of %d bytes are held after a collection; the bound is %d bytes", kept, entry, maxBytes)
	}
	runtime.KeepAlive(w)
	entries, held := c.cached()
	if held > maxBytes || entries == 0 || entries > maxBytes/entry {
		t.Fatalf("the cache holds %d entries, %d bytes; want some, within %d bytes", entries, held, maxBytes)
	}
	if entries != kept {
		t.Fatalf("the cache holds %d entries, %d are alive", entries, kept)
	}
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
