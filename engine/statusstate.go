package engine

import (
	"sync"
	"time"
)

// statusState is status's own state: when each unit entered its phase,
// the counts kept between summaries, the last summary, the hook runs'
// history, and the generation its long polls wait on. It is a read-side
// projection of the state, the views (staleness) and the claims
// (dispatch, as claimMarks), fed by the change notes of the other two:
// staleness's notes (consume) and the units dispatch marks (mark).
//
// mu guards phases, tally, lastSummary and claims. Under mu, status
// reads the views through staleness's methods, which take its lock; it
// never calls dispatch. marks, changed and hist have leaf locks of their
// own, so that dispatch notes a change without waiting for a status walk.
type statusState struct {
	mu  sync.Mutex
	now func() time.Time
	// stale is where status reads the views.
	stale *staleness
	// lastSummary is the last status summary, shared by the waiters
	// that ask at the same index, generation and marks (summary.go).
	lastSummary *cachedSummary
	// tally keeps the summary's counts between summaries (tally.go).
	tally tally
	// phases is when status first showed each unit in its phase.
	phases map[string]phaseMark
	// claims are dispatch's claims as the call under way read them;
	// nil between calls.
	claims map[string]claimMark

	// inbox holds the units to recount at the next summary.
	inbox marks
	// changed wakes status long polls: views, claims or phases moved.
	changed *generation
	hist    *History
	// timeline is the units per phase over time since the last apply,
	// one sample per summary (timeline.go).
	timeline timeline
}

func newStatusState(now func() time.Time, stale *staleness) *statusState {
	return &statusState{now: now, stale: stale, changed: newGeneration(), hist: NewHistory(DefaultHistory)}
}

// consume takes in a staleness note: the units it names may have moved
// phase, all of them after a rebuild of every view.
func (ss *statusState) consume(n staleNote) {
	if n.rebuild {
		ss.inbox.markAll()
		return
	}
	names := make([]string, 0, len(n.self)+len(n.gone)+len(n.stale))
	names = append(names, n.self...)
	for _, u := range n.gone {
		names = append(names, u.name)
	}
	for _, u := range n.stale {
		names = append(names, u.name)
	}
	if len(names) > 0 {
		ss.inbox.mark(names...)
	}
}

// mark has the next summary recount unit name: dispatch rebuilt or
// dropped its view.
func (ss *statusState) mark(name string) { ss.inbox.mark(name) }

// recountAll has the next summary recount every unit.
func (ss *statusState) recountAll() { ss.inbox.markAll() }

// recounted is how many units the summaries have counted, for the tests
// that pin what a summary costs.
func (ss *statusState) recounted() int64 {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.tally.recounted
}
