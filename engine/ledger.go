package engine

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/model"
)

// ledger is who holds which work: the queue of units that may need a run,
// the claims handed out and their leases, the hand-outs and last runs of
// each unit (the update-status timers), and what was handed out of the
// units' operations. It is the one writer of the views: it consumes
// staleness's notes (and rebuilds views) under mu and the store's read
// lock.
//
// It wakes nobody itself: each method that moves what a poll would find
// returns the wakes it owes (wakes), which the caller applies once mu is
// released. Under mu it takes only leaves: staleness's lock (through its
// methods) and status's inbox (marks).
type ledger struct {
	mu    sync.Mutex
	opts  *Options
	stale *staleness
	// inbox is status's: the units whose view the ledger rebuilt or
	// dropped, to recount.
	inbox *marks
	// queue holds the units that may need a run, so that claims look at
	// those and not at every unit.
	queue  *schedule.Queue
	claims map[string]*claim
	// runs is each unit's hand-outs and last run (timer.go).
	runs runLog
	// acts is what was handed out of the queued operations (actions.go).
	acts actionState
	// owed is the wakes collected under mu, handed out by unlock.
	owed *wakes
	// known are the machines whose polls have looked for work: the only
	// ones a wake can reach.
	known  map[string]bool
	counts ledgerCounts
}

// ledgerCounts are the ledger's work counters, read without mu.
type ledgerCounts struct {
	rebuilt, hashedBytes, built, peakClaims, prebuilt atomic.Int64
}

// claim is a unit handed to an agent and not yet reported. It holds the
// universe handed out, which the result is checked against; claims are
// the only universes the controller holds (besides the last reconciled
// ones of often-run units), so they are bounded by the agents' free hook
// slots, which is what agents ask for.
type claim struct {
	machine string
	hash    string
	uni     *charmapi.Universe
	seen    *model.Seen
	at      time.Time // when it was handed out
	until   time.Time
	// timer marks an update-status run of a settled unit: it holds no
	// wave back and leaves the unit settled in status.
	timer bool
}

func newLedger(opts *Options, stale *staleness, inbox *marks) *ledger {
	return &ledger{
		opts:   opts,
		stale:  stale,
		inbox:  inbox,
		queue:  schedule.NewQueue(opts.Backoff),
		claims: map[string]*claim{},
		runs:   newRunLog(),
		known:  map[string]bool{},
	}
}

// wakes is what a change of the ledger owes the polls once its lock is
// released: the machines whose polls must look again (every machine's, if
// all), whether status moved, and the earliest new lease end to watch.
type wakes struct {
	all      bool
	machines []string
	named    map[string]bool
	status   bool
	leaseBy  time.Time
}

// wakesPool keeps the wakes between changes: every report owes a wake
// to the machines of the queued units, and that allocates nothing.
var wakesPool = sync.Pool{New: func() any { return &wakes{named: map[string]bool{}} }}

// done returns w to the pool once applied.
func (w *wakes) done() {
	if w == nil {
		return
	}
	clear(w.named)
	clear(w.machines)
	*w = wakes{machines: w.machines[:0], named: w.named}
	wakesPool.Put(w)
}

// owe returns the wakes collected under mu, taking them from the pool on
// first use. Called with mu.
func (l *ledger) owe() *wakes {
	if l.owed == nil {
		l.owed = wakesPool.Get().(*wakes)
	}
	return l.owed
}

// wake owes machine's polls a look. Called with mu.
func (l *ledger) wake(machine string) {
	if !l.known[machine] {
		// No poll of it ever looked: nobody to wake.
		return
	}
	w := l.owe()
	if w.all || w.named[machine] {
		return
	}
	w.named[machine] = true
	w.machines = append(w.machines, machine)
}

// noteStatus owes status's long polls a look. Called with mu.
func (l *ledger) noteStatus() { l.owe().status = true }

// lock takes mu.
func (l *ledger) lock() { l.mu.Lock() }

// unlock releases mu and returns the wakes owed, nil if none; the caller
// applies them (handout.apply).
func (l *ledger) unlock() *wakes {
	w := l.owed
	l.owed = nil
	l.mu.Unlock()
	return w
}

// refresh brings the views up to st and acts on what moved. The caller
// holds the store's read lock.
func (l *ledger) refresh(st *model.State) *wakes {
	l.lock()
	l.refreshLocked(st)
	return l.unlock()
}

// forget drops every view, claim and timer: the next refresh rebuilds
// them all.
func (l *ledger) forget() *wakes {
	l.lock()
	if !l.stale.built() && len(l.claims) == 0 {
		return l.unlock()
	}
	l.stale.forget()
	// Claims are the leader's: while another node leads, agents report
	// there, and claims kept here would hold the wave back on our return.
	l.claims = map[string]*claim{}
	// Timers too: on our return every unit's starts afresh.
	l.runs.forgetTimers()
	l.acts = actionState{}
	l.noteStatus()
	l.owe().all = true
	return l.unlock()
}

// claimSnapshot is what status needs of a claim: when it was handed out,
// when its lease ends, and whether it is an update-status run. The zero
// value is no claim.
type claimSnapshot struct {
	claimed   bool
	timer     bool
	at, until time.Time
}

// refreshed brings the views up to st, as refresh does, and returns a
// snapshot of every claim, which status reads without mu. The caller
// holds the store's read lock.
func (l *ledger) refreshed(st *model.State) (map[string]claimSnapshot, *wakes) {
	l.lock()
	l.refreshLocked(st)
	snap := l.snapshotLocked()
	return snap, l.unlock()
}

// current brings unit's view up to st and returns it with the universe
// it stands for and the Seen record that universe's reconcile leaves, or
// nil if the unit is gone, and a snapshot of every claim (refreshed).
func (l *ledger) current(st *model.State, unit string) (*view, *charmapi.Universe, *model.Seen, map[string]claimSnapshot, *wakes) {
	l.lock()
	v, uni, seen := l.currentView(st, unit)
	snap := l.snapshotLocked()
	return v, uni, seen, snap, l.unlock()
}

func (l *ledger) snapshotLocked() map[string]claimSnapshot {
	out := make(map[string]claimSnapshot, len(l.claims))
	for name, cl := range l.claims {
		out[name] = claimSnapshot{claimed: true, timer: cl.timer, at: cl.at, until: cl.until}
	}
	return out
}

// stats adds the ledger's counters to w.
func (l *ledger) stats(w *WorkStats) {
	w.Rebuilt = l.counts.rebuilt.Load()
	w.HashedBytes = l.counts.hashedBytes.Load()
	w.Built = l.counts.built.Load()
	w.PeakClaims = l.counts.peakClaims.Load()
	w.Prebuilt = l.counts.prebuilt.Load()
}
