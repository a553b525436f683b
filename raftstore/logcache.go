package raftstore

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/hashicorp/raft"
)

// logCache keeps the latest entries of the Raft log in memory, as raft's
// LogCache does, so that the leader sends what it just stored to the
// followers without reading it back from the WAL; unlike raft's, it is
// bounded in bytes as well as in entries. A command entry may be as
// large as model.MaxCommandBytes, and batches of results at scale are
// large: a cache of a fixed count of entries then holds hundreds of
// megabytes of entries already applied everywhere. An entry evicted, or
// too large to cache, is read from the store.
type logCache struct {
	store raft.LogStore
	// maxBytes bounds the bytes the cached entries hold (entrySize).
	maxBytes int

	mu    sync.RWMutex
	slots []*raft.Log // by index modulo len(slots)
	bytes int
	// lo is the lowest index that may be cached, hi the highest cached.
	lo, hi uint64
}

// logCacheBytes bounds what the Raft log cache holds in memory.
const logCacheBytes = 8 << 20

var _ raft.MonotonicLogStore = (*logCache)(nil)

// newLogCache caches up to entries entries of store, within maxBytes.
func newLogCache(entries, maxBytes int, store raft.LogStore) (*logCache, error) {
	if entries <= 0 || maxBytes <= 0 {
		return nil, fmt.Errorf("log cache of %d entries and %d bytes: both must be positive", entries, maxBytes)
	}
	return &logCache{store: store, maxBytes: maxBytes, slots: make([]*raft.Log, entries)}, nil
}

// entrySize is what a cached entry holds in memory: the Log and the
// bytes it points to.
func entrySize(l *raft.Log) int {
	return int(unsafe.Sizeof(*l)) + cap(l.Data) + cap(l.Extensions)
}

// IsMonotonic implements raft.MonotonicLogStore, as the store does.
func (c *logCache) IsMonotonic() bool {
	m, ok := c.store.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}

// GetLog implements raft.LogStore.
func (c *logCache) GetLog(idx uint64, log *raft.Log) error {
	c.mu.RLock()
	cached := c.slots[idx%uint64(len(c.slots))]
	c.mu.RUnlock()
	if cached != nil && cached.Index == idx {
		*log = *cached
		return nil
	}
	return c.store.GetLog(idx, log)
}

// StoreLog implements raft.LogStore.
func (c *logCache) StoreLog(log *raft.Log) error {
	return c.StoreLogs([]*raft.Log{log})
}

// StoreLogs implements raft.LogStore: the entries are cached once the
// store has them.
func (c *logCache) StoreLogs(logs []*raft.Log) error {
	if err := c.store.StoreLogs(logs); err != nil {
		return fmt.Errorf("store %d raft log entries: %w", len(logs), err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range logs {
		c.add(l)
	}
	return nil
}

// add caches l and evicts the oldest entries past the byte bound. Called
// with mu.
func (c *logCache) add(l *raft.Log) {
	at := l.Index % uint64(len(c.slots))
	if old := c.slots[at]; old != nil {
		c.bytes -= entrySize(old)
		c.slots[at] = nil
	}
	size := entrySize(l)
	if size > c.maxBytes {
		return
	}
	c.slots[at] = l
	c.bytes += size
	if c.bytes == size || l.Index < c.lo {
		c.lo = l.Index
	}
	c.hi = max(c.hi, l.Index)
	for c.bytes > c.maxBytes && c.lo <= c.hi {
		at := c.lo % uint64(len(c.slots))
		if old := c.slots[at]; old != nil && old.Index == c.lo {
			c.bytes -= entrySize(old)
			c.slots[at] = nil
		}
		c.lo++
	}
}

// FirstIndex implements raft.LogStore.
func (c *logCache) FirstIndex() (uint64, error) { return c.store.FirstIndex() }

// LastIndex implements raft.LogStore.
func (c *logCache) LastIndex() (uint64, error) { return c.store.LastIndex() }

// DeleteRange implements raft.LogStore: the cache is emptied.
func (c *logCache) DeleteRange(lo, hi uint64) error {
	c.mu.Lock()
	clear(c.slots)
	c.bytes, c.lo, c.hi = 0, 0, 0
	c.mu.Unlock()
	return c.store.DeleteRange(lo, hi)
}

// cached says how many entries the cache holds, and their bytes.
func (c *logCache) cached() (entries, bytes int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, l := range c.slots {
		if l != nil {
			entries++
		}
	}
	return entries, c.bytes
}

// LogCache says what the node's Raft log cache holds in memory: its
// entries and their bytes (entrySize), within logCacheBytes.
func (s *Store) LogCache() (entries, bytes int) {
	if c, ok := s.logs.(*logCache); ok {
		return c.cached()
	}
	return 0, 0
}
