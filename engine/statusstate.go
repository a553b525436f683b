package engine

import (
	"sync"
	"time"

	"github.com/fixpoint/fixpoint/engine/ledger"
)

// statusState is status's own state: when each unit entered its phase,
// the counts kept between summaries, the last summary, the hook runs'
// history, and the generation its long polls wait on. It is a read-side
// projection of the state, the views (staleness) and the claims
// (the ledger's, as claimSnapshots), fed by the change notes of the other two:
// the ledger's marks in its inbox (the units a note named or whose view
// the ledger rebuilt).
//
// mu guards phases, tally, lastSummary and claims. Under mu, status
// reads the views through staleness's methods, which take its lock; it
// never calls the ledger. inbox, changed and hist have leaf locks of
// their own, so that the ledger marks a unit without waiting for a
// status walk.
type statusState struct {
	mu  sync.Mutex
	now func() time.Time
	// stale is where status reads the views.
	stale *ledger.Staleness
	// lastSummary is the last status summary, shared by the waiters
	// that ask at the same index, generation and marks (summarize.go).
	lastSummary *cachedSummary
	// tally keeps the summary's counts between summaries (tally.go,
	// recount.go).
	tally tally
	// phases is when status first showed each unit in its phase.
	phases map[string]phaseEntry
	// claims are the ledger's claims as the call under way read them;
	// nil between calls.
	claims map[string]ledger.ClaimSnapshot

	// inbox holds the units to recount at the next summary.
	inbox recountInbox
	// changed wakes status long polls: views, claims or phases moved.
	changed *generation
	hist    *History
	// timeline is the units per phase over time since the last apply,
	// one sample per summary (timeline.go).
	timeline timeline
}

func newStatusState(now func() time.Time, stale *ledger.Staleness) *statusState {
	return &statusState{now: now, stale: stale, changed: newGeneration(), hist: NewHistory(DefaultHistory)}
}

// recounted is how many units the summaries have counted
// (WorkStats.Recounted).
func (ss *statusState) recounted() int64 {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.tally.recounted
}

// phaseEntry is when the controller first reported a unit in a phase.
type phaseEntry struct {
	phase string
	since time.Time
}

// cachedSummary is the last summary computed, for the limit it was asked
// with. Its lists are shared by the copies handed out, and never changed.
type cachedSummary struct {
	*Summary
	limit int
	// marks is the inbox's count of marks the summary took in.
	marks uint64
}

// statusTold is status as the ledger tells it what moved (ledger.Status),
// under the ledger's lock: its inbox of units to recount and its
// generation, both leaf-locked. Told there rather than after the lock,
// a summary that finds the views brought up to its state finds the marks
// of what they moved.
type statusTold struct {
	changed *generation
	inbox   *recountInbox
}

func (t *statusTold) Recount(units ...string) { t.inbox.mark(units...) }
func (t *statusTold) RecountAll()             { t.inbox.markAll() }
func (t *statusTold) Changed()                { t.changed.note() }
