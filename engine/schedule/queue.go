package schedule

import (
	"iter"
	"time"
)

// Queue holds the units that may need a run, each once however often it
// is added, each with the time from which it may run. It follows
// client-go's rate-limited workqueue: Add queues a unit now, AddAfter not
// before a time, AddRateLimited after a backoff, Forget drops it. Two
// differences: units leave it in waves (Choose) rather than in queue
// order, so there is no Get; and the failures that space retries are
// counted in the replicated state, where a new leader finds them, so
// AddRateLimited is told the attempt instead of counting it.
//
// A Queue is not safe for concurrent use; the controller holds its lock.
type Queue struct {
	backoff Backoff
	items   map[string]time.Time // zero: may run now
	// index answers Choose for one machine (index.go); every change to
	// items marks the unit fresh there.
	index waveIndex
}

// NewQueue returns an empty queue whose retries are spaced by b.
func NewQueue(b Backoff) *Queue {
	return &Queue{backoff: b, items: map[string]time.Time{}, index: newWaveIndex()}
}

// Add queues unit to run now; a wait it had is dropped, since something
// changed that may make it run differently.
func (q *Queue) Add(unit string) { q.Set(unit, time.Time{}) }

// AddAfter queues unit to run not before at. A unit already queued to run
// earlier keeps its time, as in client-go.
func (q *Queue) AddAfter(unit string, at time.Time) {
	if cur, ok := q.items[unit]; ok && !cur.After(at) {
		return
	}
	q.Set(unit, at)
}

// AddRateLimited queues unit after the backoff for its attempt-th failed
// try and returns that time: when the failed universe may be tried again.
// Like AddAfter, it does not delay a unit queued to run earlier: its
// universe moved meanwhile, and the new one has not failed.
func (q *Queue) AddRateLimited(unit string, attempt int, now time.Time) time.Time {
	at := RetryAt(q.backoff, attempt, now)
	q.AddAfter(unit, at)
	return at
}

// Set queues unit not before at (now when at is zero), replacing what the
// queue held: for a caller that has just read the unit's wait from the
// state.
func (q *Queue) Set(unit string, at time.Time) {
	q.items[unit] = at
	q.Touch(unit)
}

// Forget drops unit from the queue: it is settled, or gone. It reports
// whether the unit was queued.
func (q *Queue) Forget(unit string) bool {
	_, ok := q.items[unit]
	delete(q.items, unit)
	if ok {
		q.Touch(unit)
	}
	return ok
}

// Has reports whether unit is queued.
func (q *Queue) Has(unit string) bool {
	_, ok := q.items[unit]
	return ok
}

// Len is the number of queued units.
func (q *Queue) Len() int { return len(q.items) }

// All yields every queued unit and the time from which it may run.
func (q *Queue) All() iter.Seq2[string, time.Time] {
	return func(yield func(string, time.Time) bool) {
		for u, at := range q.items {
			if !yield(u, at) {
				return
			}
		}
	}
}

// Clear empties the queue and its index: the caller touches the claimed
// units again.
func (q *Queue) Clear() {
	clear(q.items)
	q.index = newWaveIndex()
}
