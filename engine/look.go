package engine

import (
	"context"
	"time"

	"github.com/fixpoint/fixpoint/engine/waiters"
	"github.com/fixpoint/fixpoint/engine/wire"
)

// pollLook is one work poll's look at its machine's work: what it asks, and
// what the look found. It belongs to its poll's goroutine, but from the
// moment it is queued for a pass (passq) to its answer (done closed),
// when it belongs to the pass; the poll's sleep state is the waiters'
// (sleep).
type pollLook struct {
	machine string
	max     int
	// ctx is the poll's: a pushed look whose poll has ended claims
	// nothing.
	ctx   context.Context
	sleep *waiters.Poll[*pollLook]
	// polling says the poll is counted in the contacts' open polls: from
	// its first look to the look that finds work, which ends the count
	// in the same pass, so that no poll takes a lock after its answer.
	polling bool

	work []wire.Work
	next time.Time
	sig  *waiters.Signal
	err  error
	done chan struct{}
}

// A wake of every machine (a new leader's first refresh) pushes all
// their looks at once. maxPass bounds the looks one pass claims, all
// under the ledger's lock, which status and reports wait for. A pass
// holds the universes it builds ahead, with their events and encodings,
// until its last claim, and a universe of a first run in large relations
// is many times one of a small environment: so it builds about as many
// as hold aheadBytes encoded at the last pass's mean size (aheadBound),
// at least minAhead and at most maxAhead. Each look may ask for up to 256
// units, so the bound keeps a pass's memory in proportion to aheadBytes
// however many polls are pushed into it.
const (
	maxPass    = 256
	maxAhead   = 1024
	minAhead   = 64
	aheadBytes = 8 << 20
)
