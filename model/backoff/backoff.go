// Package backoff spaces retries. It is the one rule for every retry loop
// of the module: the controller's hook retries, the agent's calls to the
// control plane and the Raft store's wait for a leader.
package backoff

import (
	"math/rand/v2"
	"time"
)

// Policy spaces retries: Min doubling up to Max, each delay jittered
// down by up to Jitter of itself, so that callers failing together do not
// retry in lockstep.
type Policy struct {
	Min, Max time.Duration
	// Jitter is the largest fraction taken off a delay; zero means a
	// fifth, DESIGN's jitter for hook retries.
	Jitter float64
}

// Hooks is DESIGN's hook retry: 5 s doubling to 5 min.
var Hooks = Policy{Min: 5 * time.Second, Max: 5 * time.Minute}

// Delay is the wait before retry number attempt (1 = after the first failure).
func (b Policy) Delay(attempt int) time.Duration {
	if b.Min <= 0 {
		b.Min = Hooks.Min
	}
	if b.Max < b.Min {
		b.Max = max(b.Min, Hooks.Max)
	}
	jitter := b.Jitter
	if jitter <= 0 || jitter > 1 {
		jitter = 0.2
	}
	d := b.Min
	for i := 1; i < attempt && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	return d - time.Duration(rand.Int64N(int64(float64(d)*jitter)+1))
}
