package engine

import (
	"math/rand/v2"
	"time"
)

// Backoff spaces automatic retries of a failing hook: Min doubling up to
// Max, each delay jittered down by up to a fifth so that units failing
// together do not retry in lockstep.
type Backoff struct {
	Min, Max time.Duration
}

// DefaultBackoff is DESIGN's 5 s doubling to 5 min.
var DefaultBackoff = Backoff{Min: 5 * time.Second, Max: 5 * time.Minute}

// Delay is the wait before retry number attempt (1 = after the first failure).
func (b Backoff) Delay(attempt int) time.Duration {
	if b.Min <= 0 {
		b = DefaultBackoff
	}
	d := b.Min
	for i := 1; i < attempt && d < b.Max; i++ {
		d *= 2
	}
	if d > b.Max {
		d = b.Max
	}
	return d - time.Duration(rand.Int64N(int64(d)/5+1))
}
