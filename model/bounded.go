package model

import (
	"container/heap"
	"slices"
	"sync"
)

// Bounded is a store of records kept by key (a unit, a machine, a node),
// with a byte cap per key and one in total: adding past a cap drops the
// oldest records first, of that key for its cap, of the whole store for
// the total one. Every record gets the next sequence number, so that a
// reader resumes after the last one it saw. It is what the debug log and
// the unit events are kept in (logs.go, events.go).
//
// The FSM is its only writer and adds records in log order, so every
// replica keeps exactly the same records: eviction depends on nothing
// but what was added. Readers (the API) take the read lock and never the
// state's, so reading a flood of lines does not hold up the controller.
type Bounded[T any] struct {
	mu sync.RWMutex
	// perKey and total are the caps, in bytes as measure counts them.
	perKey, total int
	measure       func(*T) (key string, size int)
	stamp         func(*T, uint64)
	seq           func(*T) uint64

	next    uint64 // the last sequence number given out
	bytes   int
	dropped uint64
	rings   map[string]*ring[T]
	oldest  ringHeap[T]
	changed chan struct{}
}

// ring is one key's records, oldest first; items[head:] are live.
type ring[T any] struct {
	key   string
	items []T
	sizes []int
	head  int
	bytes int
	at    int // position in the heap
	first uint64
}

func (r *ring[T]) live() []T { return r.items[r.head:] }

func (r *ring[T]) pop() int {
	n := r.sizes[r.head]
	var zero T
	r.items[r.head] = zero
	r.head++
	r.bytes -= n
	// Compact in halves, so that popping costs O(1) amortised.
	if r.head > 64 && r.head*2 > len(r.items) {
		r.items = append([]T(nil), r.items[r.head:]...)
		r.sizes = append([]int(nil), r.sizes[r.head:]...)
		r.head = 0
	}
	return n
}

// ringHeap orders rings by their oldest record, for the total cap.
type ringHeap[T any] []*ring[T]

func (h ringHeap[T]) Len() int           { return len(h) }
func (h ringHeap[T]) Less(i, j int) bool { return h[i].first < h[j].first }
func (h ringHeap[T]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].at, h[j].at = i, j
}
func (h *ringHeap[T]) Push(x any) {
	r := x.(*ring[T])
	r.at = len(*h)
	*h = append(*h, r)
}
func (h *ringHeap[T]) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}

// NewBounded returns an empty store with the given caps. measure names a
// record's key and its size; stamp and seq set and read its sequence
// number.
func NewBounded[T any](perKey, total int, measure func(*T) (string, int), stamp func(*T, uint64), seq func(*T) uint64) *Bounded[T] {
	return &Bounded[T]{perKey: perKey, total: total, measure: measure, stamp: stamp, seq: seq,
		rings: map[string]*ring[T]{}, changed: make(chan struct{})}
}

// Add appends records in order, numbering them, and drops the oldest ones
// over the caps. A record larger than the per-key cap is dropped whole.
func (b *Bounded[T]) Add(items []T) {
	if len(items) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range items {
		b.addLocked(items[i], 0)
	}
	close(b.changed)
	b.changed = make(chan struct{})
}

// addLocked appends one record; seq 0 numbers it next.
func (b *Bounded[T]) addLocked(it T, seq uint64) {
	if seq == 0 {
		b.next++
		seq = b.next
	} else if seq > b.next {
		b.next = seq
	}
	b.stamp(&it, seq)
	key, size := b.measure(&it)
	if size > b.perKey || size > b.total {
		b.dropped++
		return
	}
	r := b.rings[key]
	if r == nil {
		r = &ring[T]{key: key}
		b.rings[key] = r
		r.first = seq
		heap.Push(&b.oldest, r)
	}
	r.items = append(r.items, it)
	r.sizes = append(r.sizes, size)
	r.bytes += size
	b.bytes += size
	for r.bytes > b.perKey {
		b.dropOldest(r)
	}
	for b.bytes > b.total {
		b.dropOldest(b.oldest[0])
	}
}

// dropOldest drops r's oldest record, and r itself once empty.
func (b *Bounded[T]) dropOldest(r *ring[T]) {
	b.bytes -= r.pop()
	b.dropped++
	if len(r.live()) == 0 {
		heap.Remove(&b.oldest, r.at)
		delete(b.rings, r.key)
		return
	}
	r.first = b.seq(&r.live()[0])
	heap.Fix(&b.oldest, r.at)
}

// Changed is closed when records are next added.
func (b *Bounded[T]) Changed() <-chan struct{} {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.changed
}

// BoundedStats says what a store holds.
type BoundedStats struct {
	// Last is the last sequence number given out.
	Last uint64 `json:"last"`
	// Bytes and Records are what is kept now, within Cap.
	Bytes   int `json:"bytes"`
	Records int `json:"records"`
	Cap     int `json:"cap"`
	// Dropped counts records dropped to keep within the caps.
	Dropped uint64 `json:"dropped"`
}

// Stats says what the store holds.
func (b *Bounded[T]) Stats() BoundedStats {
	b.mu.RLock()
	defer b.mu.RUnlock()
	n := 0
	for _, r := range b.rings {
		n += len(r.live())
	}
	return BoundedStats{Last: b.next, Bytes: b.bytes, Records: n, Cap: b.total, Dropped: b.dropped}
}

// Read returns, in order, the records after sequence number after whose
// key passes keyOK (nil: every key) and that pass ok (nil: all). At most
// limit are returned (0: no limit): the first ones, or with tail the
// last ones. last is the store's last sequence number: a reader that got
// everything resumes after it.
func (b *Bounded[T]) Read(after uint64, keyOK func(string) bool, ok func(*T) bool, limit int, tail bool) (out []T, last uint64) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for key, r := range b.rings {
		if keyOK != nil && !keyOK(key) {
			continue
		}
		live := r.live()
		i, _ := slices.BinarySearchFunc(live, after+1, func(it T, s uint64) int {
			switch q := b.seq(&it); {
			case q < s:
				return -1
			case q > s:
				return 1
			}
			return 0
		})
		for j := i; j < len(live); j++ {
			if ok == nil || ok(&live[j]) {
				out = append(out, live[j])
			}
		}
	}
	slices.SortFunc(out, func(x, y T) int {
		a, c := b.seq(&x), b.seq(&y)
		switch {
		case a < c:
			return -1
		case a > c:
			return 1
		}
		return 0
	})
	if limit > 0 && len(out) > limit {
		if tail {
			out = out[len(out)-limit:]
		} else {
			out = out[:limit]
			// More are kept: the reader resumes after what it got.
			return out, b.seq(&out[len(out)-1])
		}
	}
	return out, b.next
}

// BoundedDump is a store's content, for a snapshot: the records in order
// and the last sequence number given out.
type BoundedDump[T any] struct {
	Last    uint64 `json:"last"`
	Dropped uint64 `json:"dropped,omitempty"`
	Records []T    `json:"records"`
}

// Dump copies the store's content.
func (b *Bounded[T]) Dump() *BoundedDump[T] {
	all, last := b.Read(0, nil, nil, 0, false)
	b.mu.RLock()
	defer b.mu.RUnlock()
	return &BoundedDump[T]{Last: last, Dropped: b.dropped, Records: all}
}

// Load replaces the store's content with a dump (nil: empty), keeping
// each record's sequence number.
func (b *Bounded[T]) Load(d *BoundedDump[T]) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rings, b.oldest, b.bytes, b.next, b.dropped = map[string]*ring[T]{}, nil, 0, 0, 0
	if d != nil {
		for _, it := range d.Records {
			b.addLocked(it, b.seq(&it))
		}
		b.next = max(b.next, d.Last)
		b.dropped += d.Dropped
	}
	close(b.changed)
	b.changed = make(chan struct{})
}
