// Package passq batches the looks of work polls that arrive together into
// passes: one goroutine, which the queue owns, serves every look queued, a
// pass at a time, so that the looks one change wakes are served together
// and the claims' lock is taken once per pass, not once per poll. Its
// lock is a leaf, never held while the pass is served.
package passq

import (
	"slices"
	"sync"
	"sync/atomic"
)

// Queue holds the looks waiting for a pass and runs their server.
type Queue[T any] struct {
	mu      sync.Mutex
	pending []T
	serving bool
	max     int
	// serve answers one pass's batch and returns the looks it left for
	// the next pass, and whether any look was handed work.
	serve func(batch []T) (rest []T, handed bool)
	// drained, if set, is called when the queue runs dry after passes
	// that handed work.
	drained func()
	passes  atomic.Int64
}

// New returns a queue whose passes take at most max looks each, served
// by serve; drained, if not nil, is called each time the queue runs dry
// after a pass that handed work.
func New[T any](max int, serve func(batch []T) (rest []T, handed bool), drained func()) *Queue[T] {
	return &Queue[T]{max: max, serve: serve, drained: drained}
}

// Add queues looks for the next pass, all together, and starts the
// server if none runs. A pass takes its batch under the same lock, so it
// holds every look of one call or none of them (up to max).
func (q *Queue[T]) Add(looks ...T) {
	if len(looks) == 0 {
		return
	}
	q.mu.Lock()
	q.pending = append(q.pending, looks...)
	start := !q.serving
	q.serving = true
	q.mu.Unlock()
	if start {
		go q.run()
	}
}

// Passes counts the passes served.
func (q *Queue[T]) Passes() int64 { return q.passes.Load() }

// take returns the next pass's batch, at most max looks in the order
// they were queued; when none is left it stops the server and says so.
func (q *Queue[T]) take() (batch []T, more bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	batch = q.pending
	q.pending = nil
	if len(batch) > q.max {
		batch, q.pending = batch[:q.max:q.max], batch[q.max:]
	}
	if len(batch) == 0 {
		q.serving = false
		return nil, false
	}
	return batch, true
}

// putBack queues looks again ahead of the others: the next pass serves
// them first.
func (q *Queue[T]) putBack(looks []T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending = append(slices.Clip(looks), q.pending...)
}

// run serves the queued looks, a pass at a time, until none is left.
func (q *Queue[T]) run() {
	handed := false
	for {
		batch, more := q.take()
		if !more {
			if handed && q.drained != nil {
				q.drained()
			}
			return
		}
		q.passes.Add(1)
		rest, h := q.serve(batch)
		handed = handed || h
		if len(rest) > 0 {
			q.putBack(rest)
		}
	}
}
