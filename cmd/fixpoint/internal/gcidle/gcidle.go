// Package gcidle moves garbage collections out of bursts of work and into
// the quiet that follows them.
//
// The collector starts a cycle when the heap reaches its goal, which is
// wherever the allocations happen to be: in a server whose work comes in
// bursts (a change hands out 100 universes in a few milliseconds, then
// the agents' hooks run for hundreds), nearly every cycle starts inside a
// burst, because that is where nearly all the allocating is. There its
// mark workers take a processor and its assists slow the goroutines
// doing the work: in bench/agents, one change in three or four reached
// its agents in 15-35 ms instead of 6-10 (a runtime trace showed a 15 ms
// mark phase with 6 ms of assists inside the slow changes, and none in
// the others).
//
// A Collector is told when each burst ends (Quiet). Once nothing more
// happened for a short while, it compares the heap with where the next
// cycle may start and with what the recent bursts allocated: if the next
// burst, as large as the largest of them, could start a cycle, it runs
// the cycle now. The runtime starts a cycle anywhere from 45/64 to 61/64
// of the way from the live heap to the goal (runtime/mgcpacer.go), so the
// lower bound is what counts.
//
// A cycle is only brought forward, never added, and not by much: it runs
// only once the heap has grown by a quarter of what the cycle allows,
// and not at all while each recent burst alone outgrew where a cycle may
// start, since no collection between bursts keeps those free of one. At
// a burst's size b and a runway R (the live heap, at the default GOGC),
// cycles come about R/(R-b) times as often.
package gcidle

import (
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"time"
)

// Collector runs a garbage collection in the quiet after a burst when the
// next burst would otherwise run one.
type Collector struct {
	quiet time.Duration

	mu    sync.Mutex
	timer *time.Timer
	// since is the heap's allocations (bytes) at the last check;
	// bursts are what the last checks saw allocated, in a ring.
	since  uint64
	bursts [8]uint64
	next   int
	// running says a collection it started is under way: a check
	// meanwhile would read the last cycle's goal and start another.
	running bool
	ran     int64
	// checked, if set (by tests), hears of each check's end.
	checked chan<- struct{}

	samples []metrics.Sample
}

// New returns a collector that checks after quiet without a burst.
func New(quiet time.Duration) *Collector {
	c := &Collector{quiet: quiet, samples: []metrics.Sample{
		{Name: "/gc/heap/goal:bytes"},
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}}
	c.since = c.read()[1]
	return c
}

// Quiet says a burst of work ended: the check runs once quiet passes
// without another. Cheap enough to call at the end of every burst.
func (c *Collector) Quiet() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer == nil {
		c.timer = time.AfterFunc(c.quiet, c.check)
		return
	}
	c.timer.Reset(c.quiet)
}

// Ran returns how many collections the collector ran.
func (c *Collector) Ran() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ran
}

// check runs a collection if the largest of the recent bursts, and a
// quarter more, would take the heap to where a cycle may start: the
// bursts of bench/agents' changes allocated 2-5 MB each, and with the
// last one alone as the measure, a small burst left room for the next
// one but not for a large one. The bounds of the package comment apply.
func (c *Collector) check() {
	if c.checked != nil {
		defer func() { c.checked <- struct{}{} }()
	}
	c.mu.Lock()
	if c.running {
		c.mu.Unlock()
		return
	}
	v := c.read()
	goal, allocs, heap, live := v[0], v[1], v[2], v[3]
	last := allocs - c.since
	c.since = allocs
	c.bursts[c.next] = last
	c.next = (c.next + 1) % len(c.bursts)
	if !due(goal, heap, live, slices.Min(c.bursts[:]), slices.Max(c.bursts[:])) {
		c.mu.Unlock()
		return
	}
	c.running = true
	c.mu.Unlock()
	// Outside mu: a burst that ends meanwhile must not wait for the
	// collection.
	runtime.GC()
	c.mu.Lock()
	c.running = false
	c.ran++
	c.since = c.read()[1]
	c.mu.Unlock()
}

// due says whether to collect now, at a heap goal, the bytes in heap
// objects, the live heap the last cycle left, and the smallest and the
// largest recent burst's allocations.
//
// Only bursts that each outgrow where a cycle may start get one inside
// them whatever runs between. A single large one does not say so: the
// initial convergence of bench/agents' 1,000 units was one burst past
// that point, the check after it let a heap that had almost reached it
// be, and the first change's 100 hand-outs ran with a runtime cycle in
// 3 of 24 runs (GODEBUG=gctrace=1 on the server).
func due(goal, heap, live, least, burst uint64) bool {
	if goal <= live || heap < live {
		return false // no cycle yet, or one under way
	}
	runway := goal - live
	start := runway / 64 * 45 // from live, where a cycle may start
	switch {
	case least > start:
		return false // the bursts get a cycle inside them whatever runs between
	case heap-live < runway/4:
		return false // too early in the cycle
	default:
		return heap-live+burst+burst/4 >= start
	}
}

// read returns the heap goal, the heap's allocations so far, the bytes
// in live and unswept objects, and the heap the last cycle left live.
func (c *Collector) read() [4]uint64 {
	metrics.Read(c.samples)
	var v [4]uint64
	for i, s := range c.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	return v
}
