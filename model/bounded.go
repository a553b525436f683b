package model

import (
	"container/heap"
	"slices"
	"sync"
)

// Bounded is a store of records kept by key (a unit, a machine, a node),
// with a cap per key and one in total on the memory it holds: adding past
// a cap drops the oldest records first, of that key for its cap, of the
// whole store for the total one. What a key holds is counted as the heap
// holds it (memcost.go): its ring (ringCost), every place of the ring's
// arrays (slot bytes each, spare places included) and its records'
// strings (measure), so a cap bounds the Go heap the store takes. Every record gets the next sequence number, so that a
// reader resumes after the last one it saw. It is what the debug log and
// the unit events are kept in (logs.go, events.go).
//
// The FSM is its only writer and adds records in log order, so every
// replica keeps exactly the same records: eviction depends on nothing
// but what was added. Readers (the API) take the read lock and never the
// state's, so reading a flood of lines does not hold up the controller.
type Bounded[T any] struct {
	mu sync.RWMutex
	// perKey and total are the caps, in bytes of memory as counted.
	perKey, total int
	// slot is what one place of a ring's arrays costs.
	slot    int
	measure func(*T) (key string, size int)
	stamp   func(*T, uint64)
	seq     func(*T) uint64

	// group names a key's group (an environment): over the total cap,
	// the oldest record of the group holding the most goes first, so that
	// a group flooding the store drops its own records before another's.
	// nil puts every key in one group.
	group func(key string) string

	next    uint64 // the last sequence number given out
	bytes   int
	dropped uint64
	rings   map[string]*ring[T]
	groups  map[string]*group[T]
	// largest orders the groups by what they hold, most first.
	largest groupHeap[T]
	changed chan struct{}
}

// group is the rings of one group: what they hold, and their order by
// oldest record for the total cap.
type group[T any] struct {
	name   string
	bytes  int
	oldest ringHeap[T]
	at     int // position in largest
}

// groupHeap orders groups by what they hold, most first; ties by name,
// so that every replica drops alike.
type groupHeap[T any] []*group[T]

func (h groupHeap[T]) Len() int { return len(h) }
func (h groupHeap[T]) Less(i, j int) bool {
	if h[i].bytes != h[j].bytes {
		return h[i].bytes > h[j].bytes
	}
	return h[i].name < h[j].name
}
func (h groupHeap[T]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].at, h[j].at = i, j
}
func (h *groupHeap[T]) Push(x any) {
	g := x.(*group[T])
	g.at = len(*h)
	*h = append(*h, g)
}
func (h *groupHeap[T]) Pop() any {
	old := *h
	g := old[len(old)-1]
	*h = old[:len(old)-1]
	return g
}

// ring is one key's records, oldest first; items[head:] are live. bytes
// is all it costs: ringCost, cap(items) slots, its records' sizes.
type ring[T any] struct {
	key   string
	group *group[T]
	items []T
	sizes []int
	head  int
	bytes int
	at    int // position in the heap
	first uint64
}

// minRing is the fewest places a ring's arrays have.
const minRing = 4

func (r *ring[T]) live() []T { return r.items[r.head:] }

// resize moves the live records into arrays of n places (make gives
// exactly n, whatever the platform's allocator rounds to, so every
// replica counts the same) and counts the change at slot bytes a place.
func (r *ring[T]) resize(n, slot int) {
	r.bytes += (n - cap(r.items)) * slot
	items, sizes := make([]T, len(r.live()), n), make([]int, len(r.live()), n)
	copy(items, r.live())
	copy(sizes, r.sizes[r.head:])
	r.items, r.sizes, r.head = items, sizes, 0
}

// push appends a record of size bytes; a full ring moves into arrays of
// twice its live records, which also drops the places popped before.
func (r *ring[T]) push(it T, size, slot int) {
	if len(r.items) == cap(r.items) {
		r.resize(max(minRing, 2*len(r.live())), slot)
	}
	r.items = append(r.items, it)
	r.sizes = append(r.sizes, size)
	r.bytes += size
}

// pop drops the oldest record and returns its size. Arrays four times
// larger than the live records shrink to twice, so that a ring holds at
// most four places a record and popping costs O(1) amortised.
func (r *ring[T]) pop(slot int) int {
	n := r.sizes[r.head]
	var zero T
	r.items[r.head] = zero
	r.head++
	r.bytes -= n
	if live := len(r.live()); live > 0 && cap(r.items) > minRing && live*4 <= cap(r.items) {
		r.resize(max(minRing, 2*live), slot)
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

// NewBounded returns an empty store with the given caps. slot is what a
// record's place in a ring costs (its struct and its size's int);
// measure names a record's key and what it costs beyond its slot (its
// strings, memcost.go); stamp and seq set and read its sequence number.
func NewBounded[T any](perKey, total, slot int, measure func(*T) (string, int), stamp func(*T, uint64), seq func(*T) uint64) *Bounded[T] {
	return &Bounded[T]{perKey: perKey, total: total, slot: slot, measure: measure, stamp: stamp, seq: seq,
		rings: map[string]*ring[T]{}, groups: map[string]*group[T]{}, changed: make(chan struct{})}
}

// GroupBy makes the store share its total cap among the groups its keys
// fall in (group names each key's), before anything is added: over the
// cap, the group holding the most drops its oldest record first. With
// one group this is the store's order without groups.
func (b *Bounded[T]) GroupBy(group func(key string) string) *Bounded[T] {
	b.group = group
	return b
}

// groupOf returns key's group, made when new.
func (b *Bounded[T]) groupOf(key string) *group[T] {
	name := ""
	if b.group != nil {
		name = b.group(key)
	}
	g := b.groups[name]
	if g == nil {
		g = &group[T]{name: name}
		b.groups[name] = g
		heap.Push(&b.largest, g)
	}
	return g
}

// grow counts n more bytes (fewer when negative) in r, its group and the
// store.
func (b *Bounded[T]) grow(r *ring[T], n int) {
	b.bytes += n
	r.group.bytes += n
	heap.Fix(&b.largest, r.group.at)
}

// Add appends records in order, numbering them, and drops the oldest ones
// over the caps. A record that alone in its ring would be over a cap is
// dropped whole.
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
	if alone := ringCost(key) + minRing*b.slot + size; alone > b.perKey || alone > b.total {
		b.dropped++
		return
	}
	r := b.rings[key]
	if r == nil {
		r = &ring[T]{key: key, bytes: ringCost(key), group: b.groupOf(key)}
		b.rings[key] = r
		r.first = seq
		heap.Push(&r.group.oldest, r)
		b.grow(r, r.bytes)
	}
	was := r.bytes
	r.push(it, size, b.slot)
	b.grow(r, r.bytes-was)
	for r.bytes > b.perKey {
		b.dropOldest(r)
	}
	for b.bytes > b.total {
		g := b.largest[0]
		b.dropOldest(g.oldest[0])
	}
}

// dropOldest drops r's oldest record, and r itself once empty (and its
// group once that holds no ring).
func (b *Bounded[T]) dropOldest(r *ring[T]) {
	was := r.bytes
	r.pop(b.slot)
	b.grow(r, r.bytes-was)
	b.dropped++
	g := r.group
	if len(r.live()) == 0 {
		b.grow(r, -r.bytes)
		heap.Remove(&g.oldest, r.at)
		delete(b.rings, r.key)
		if len(g.oldest) == 0 {
			heap.Remove(&b.largest, g.at)
			delete(b.groups, g.name)
		}
		return
	}
	r.first = b.seq(&r.live()[0])
	heap.Fix(&g.oldest, r.at)
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
	// Bytes and Records are what is kept now, within Cap; Bytes counts
	// memory as the store does (memcost.go).
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
	b.rings, b.groups, b.largest, b.bytes, b.next, b.dropped = map[string]*ring[T]{}, map[string]*group[T]{}, nil, 0, 0, 0
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
