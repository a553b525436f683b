package memgov

import (
	"context"
	"fmt"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// Pressure: a node is under memory pressure once what the runtime counts
// against the limit reaches High of it, and out of it once that falls
// below Low; the gap keeps it from flapping at the edge.
const (
	High = 0.90
	Low  = 0.80
)

// Intake under pressure: what the node takes in that grows its memory,
// and that an agent sends again when refused, is admitted one request
// per Pace, each waiting at most MaxHold for its turn; a request whose
// turn is further off is refused (503, retried by the agent).
const (
	Pace    = 50 * time.Millisecond
	MaxHold = 2 * time.Second
)

// SampleEvery is how often a running Governor reads the runtime.
const SampleEvery = 250 * time.Millisecond

// Governor watches a node's memory against its limit and slows its
// intake under pressure. Its zero intake state admits everything; with no
// limit it never comes under pressure.
type Governor struct {
	limit Limit
	read  func() uint64
	pace  time.Duration
	hold  time.Duration

	under atomic.Bool
	used  atomic.Uint64
	// held counts requests that waited for their turn, refused those
	// that were turned away, entered the times pressure began.
	held, refused, entered atomic.Uint64

	mu   sync.Mutex
	next time.Time // the earliest the next intake request is admitted
}

// New returns the governor of a node with limit l. read says how many
// bytes the runtime counts against the limit (nil: InUse); tests give
// their own reading.
func New(l Limit, read func() uint64) *Governor {
	if read == nil {
		read = InUse
	}
	return &Governor{limit: l, read: read, pace: Pace, hold: MaxHold}
}

// SetPace changes the pace and the longest hold of admissions under
// pressure.
func (g *Governor) SetPace(pace, hold time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pace, g.hold = pace, hold
}

// Limit is the node's limit.
func (g *Governor) Limit() Limit { return g.limit }

var samples = []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
var samplesMu sync.Mutex

// InUse is the memory the runtime counts against its soft limit: all it
// maps, less the heap returned to the operating system.
func InUse() uint64 {
	samplesMu.Lock()
	defer samplesMu.Unlock()
	metrics.Read(samples)
	total, released := samples[0].Value.Uint64(), samples[1].Value.Uint64()
	if released > total {
		return 0
	}
	return total - released
}

// Sample reads the memory in use and moves in or out of pressure; it
// reports whether the node is under pressure.
func (g *Governor) Sample() bool {
	used := g.read()
	g.used.Store(used)
	if g.limit.Bytes <= 0 {
		g.under.Store(false)
		return false
	}
	lim := float64(g.limit.Bytes)
	switch {
	case !g.under.Load() && float64(used) >= High*lim:
		g.under.Store(true)
		g.entered.Add(1)
	case g.under.Load() && float64(used) < Low*lim:
		g.under.Store(false)
	}
	return g.under.Load()
}

// Run samples every interval until ctx ends.
func (g *Governor) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		g.Sample()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Under reports whether the node is under memory pressure, as last
// sampled.
func (g *Governor) Under() bool { return g != nil && g.under.Load() }

// Stats is what the governor says in metrics.
type Stats struct {
	Limit, Used              uint64
	Under                    bool
	Held, Refused, Pressures uint64
}

// Stats reads the governor's counters.
func (g *Governor) Stats() Stats {
	return Stats{Limit: uint64(max(g.limit.Bytes, 0)), Used: g.used.Load(), Under: g.under.Load(),
		Held: g.held.Load(), Refused: g.refused.Load(), Pressures: g.entered.Load()}
}

// Condition is the node's memory condition as status shows it: "" when
// it is not under pressure.
func (g *Governor) Condition() string {
	if !g.Under() {
		return ""
	}
	return fmt.Sprintf("under memory pressure: %s in use of its %s limit (%s); taking new work, results and logs from agents slowly",
		FormatSize(g.used.Load()), FormatSize(uint64(g.limit.Bytes)), g.limit.Source)
}

// Admit admits one intake request: at once when the node is not under
// pressure; under it, at its turn, one per pace, after waiting at most
// the longest hold. It reports false when the request is turned away
// (its turn too far off) or ctx ended first.
func (g *Governor) Admit(ctx context.Context) bool {
	if !g.Under() {
		return true
	}
	now := time.Now()
	g.mu.Lock()
	at := g.next
	if at.Before(now) {
		at = now
	}
	wait := at.Sub(now)
	if wait > g.hold {
		g.mu.Unlock()
		g.refused.Add(1)
		return false
	}
	g.next = at.Add(g.pace)
	g.mu.Unlock()
	if wait <= 0 {
		return true
	}
	g.held.Add(1)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
