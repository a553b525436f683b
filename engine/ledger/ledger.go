package ledger

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// Ledger is who holds which work: the queue of units that may need a run,
// the claims handed out and their leases, the hand-outs and last runs of
// each unit (the update-status timers), and what was handed out of the
// units' operations. It is the one writer of the views (Staleness): it
// consumes their notes, and rebuilds views, under mu and the store's read
// lock.
//
// It wakes nobody itself: each method that moves what a poll would find
// returns what it owes (Owed), which the caller acts on once mu is
// released. Status it tells under mu (Options.Status), so that a reader
// that finds the views brought up to its state finds status told of what
// moved too. Under mu it takes only leaf locks: the views' and those of
// the Status it is given.
type Ledger struct {
	mu    sync.Mutex
	opts  Options
	build Builder
	stale *Staleness
	// queue holds the units that may need a run, so that claims look at
	// those and not at every unit.
	queue  *schedule.Queue
	claims map[string]*claim
	// runs is each unit's hand-outs and last run (timer.go).
	runs runLog
	// acts is what was handed out of the queued operations (actions.go).
	acts actionState
	// owed is what the changes made under mu owe, handed out by unlock.
	owed *Owed
	// known are the machines whose polls have looked for work: the only
	// ones a wake can reach.
	known  map[string]bool
	counts counts
}

// Options tune a Ledger.
type Options struct {
	// Backoff spaces automatic retries of a failing hook.
	Backoff schedule.Backoff
	// Lease is how long a unit handed out stays claimed without a report.
	Lease time.Duration
	// UpdateStatus is how long a settled unit of an old-hook or ops charm
	// waits after its last run before it gets update-status; not
	// positive turns the timer off.
	UpdateStatus time.Duration
	Now          func() time.Time
	// Status is told what the ledger's changes move in status.
	Status Status
	// Changes is the state's journal (model.Journal.ChangesSince): what
	// changed after an index, false when it does not reach back that
	// far. It is read under the store's read lock, with the state it
	// journals. Nil: every refresh rebuilds every view.
	Changes func(since uint64) ([]model.Touched, bool)
}

// Status is what the ledger tells status, under its lock: the units to
// recount, every unit to recount, and that its long polls must look
// again. Its methods take only leaf locks and call nothing back.
type Status interface {
	Recount(units ...string)
	RecountAll()
	Changed()
}

// Builder builds the universes the ledger hands out and hashes: Build
// the universe of a unit of st and the Seen record its reconcile leaves
// (nil if the unit is gone), BuildHashed the same with its hash and the
// bytes hashed, and Result a hook's result on a universe handed out
// (engine.ResultOf).
type Builder struct {
	Build       func(st *model.State, unit string) (*charmapi.Universe, *model.Seen)
	BuildHashed func(st *model.State, unit string) (*charmapi.Universe, *model.Seen, string, int)
	Result      func(uni *charmapi.Universe, hash string, seen *model.Seen, output []byte, hookErr string, last *charmapi.Universe) *model.Result
}

// counts are the ledger's work counters, read without mu.
type counts struct {
	rebuilt, hashedBytes, built, peakClaims, prebuilt atomic.Int64
}

// claim is a unit handed to an agent and not yet reported. It holds the
// universe handed out without its events, which the result is checked
// against; claims are
// the only universes the controller holds (besides the last reconciled
// ones of often-run units), so they are bounded by the agents' free hook
// slots, which is what agents ask for.
type claim struct {
	Machine string
	Hash    string
	uni     *charmapi.Universe
	seen    *model.Seen
	at      time.Time // when it was handed out
	until   time.Time
	// timer marks an update-status run of a settled unit: it holds no
	// wave back and leaves the unit settled in status.
	timer bool
}

// New returns a ledger with no view: the first Refresh builds them all.
// A nil opts.Status tells nobody.
func New(opts Options, build Builder) *Ledger {
	if opts.Status == nil {
		opts.Status = noStatus{}
	}
	return &Ledger{
		opts:   opts,
		build:  build,
		stale:  newStaleness(),
		queue:  schedule.NewQueue(opts.Backoff),
		claims: map[string]*claim{},
		runs:   newRunLog(),
		known:  map[string]bool{},
	}
}

// Views is the ledger's views, for reading.
func (l *Ledger) Views() *Staleness { return l.stale }

// Owed is what a change of the ledger owes once its lock is released:
// the machines whose work polls must look again (every machine's, if
// All), and the earliest new lease end to watch. The caller acts on it
// and hands it back (Done).
type Owed struct {
	All      bool
	Machines []string
	// LeaseBy is the earliest lease end to watch for, and LeaseAt the
	// ledger's clock when it was owed, so that the watch is set with no
	// clock read of its own.
	LeaseBy, LeaseAt time.Time
	named            map[string]bool
}

// owedFree keeps Owed values between changes: every report owes a wake
// to the machines of the queued units, and that allocates nothing. A
// channel rather than a sync.Pool, which drops what it holds at will.
var owedFree = make(chan *Owed, 64)

// Done hands w back once acted on; w must not be used after.
func (w *Owed) Done() {
	if w == nil {
		return
	}
	clear(w.named)
	clear(w.Machines)
	*w = Owed{Machines: w.Machines[:0], named: w.named}
	select {
	case owedFree <- w:
	default:
	}
}

// Wakes says whether w wakes any work poll.
func (w *Owed) Wakes() bool { return w.All || len(w.Machines) > 0 }

// owe returns what the changes under mu owe, taken from owedFree on
// first use. Called with mu.
func (l *Ledger) owe() *Owed {
	if l.owed == nil {
		select {
		case l.owed = <-owedFree:
		default:
			l.owed = &Owed{named: map[string]bool{}}
		}
	}
	return l.owed
}

// wake owes machine's polls a look. Called with mu.
func (l *Ledger) wake(machine string) {
	if !l.known[machine] {
		// No poll of it ever looked: nobody to wake.
		return
	}
	w := l.owe()
	if w.All || w.named[machine] {
		return
	}
	w.named[machine] = true
	w.Machines = append(w.Machines, machine)
}

// recount tells status to recount names. Called with mu.
func (l *Ledger) recount(names ...string) {
	if len(names) > 0 {
		l.opts.Status.Recount(names...)
	}
}

// recountAll tells status to recount every unit. Called with mu.
func (l *Ledger) recountAll() { l.opts.Status.RecountAll() }

// noteStatus tells status's long polls to look again. Called with mu.
func (l *Ledger) noteStatus() { l.opts.Status.Changed() }

// lock takes mu.
func (l *Ledger) lock() { l.mu.Lock() }

// unlock releases mu and returns what the changes under it owe, nil if
// nothing.
func (l *Ledger) unlock() *Owed {
	w := l.owed
	l.owed = nil
	l.mu.Unlock()
	return w
}

// Refresh brings the views up to st and acts on what moved. The caller
// holds the store's read lock.
func (l *Ledger) Refresh(st *model.State) *Owed {
	l.lock()
	l.refreshLocked(st)
	return l.unlock()
}

// Forget drops every view, claim and timer: the next refresh rebuilds
// them all.
func (l *Ledger) Forget() *Owed {
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
	l.wakeAll()
	return l.unlock()
}

// ClaimSnapshot is what status needs of a claim: when it was handed out,
// when its lease ends, and whether it is an update-status run. The zero
// value is no claim.
type ClaimSnapshot struct {
	Claimed   bool
	Timer     bool
	At, Until time.Time
}

// Refreshed brings the views up to st, as Refresh does, and returns a
// snapshot of every claim, which status reads without mu. The caller
// holds the store's read lock.
func (l *Ledger) Refreshed(st *model.State) (map[string]ClaimSnapshot, *Owed) {
	l.lock()
	l.refreshLocked(st)
	snap := l.snapshotLocked()
	return snap, l.unlock()
}

// Current brings unit's view up to st and returns it with the universe
// it stands for and the Seen record that universe's reconcile leaves, or
// nil if the unit is gone, and a snapshot of every claim (Refreshed).
func (l *Ledger) Current(st *model.State, unit string) (*View, *charmapi.Universe, *model.Seen, map[string]ClaimSnapshot, *Owed) {
	l.lock()
	v, uni, seen := l.currentView(st, unit)
	snap := l.snapshotLocked()
	return v, uni, seen, snap, l.unlock()
}

func (l *Ledger) snapshotLocked() map[string]ClaimSnapshot {
	out := make(map[string]ClaimSnapshot, len(l.claims))
	for name, cl := range l.claims {
		out[name] = ClaimSnapshot{Claimed: true, Timer: cl.timer, At: cl.at, Until: cl.until}
	}
	return out
}

// Counts are the ledger's work: views rebuilt and bytes hashed,
// universes built whose hash was known, the most claims held at once and
// the universes a claim took from a pass's build-ahead.
type Counts struct {
	Rebuilt, HashedBytes, Built, PeakClaims, Prebuilt int64
}

// Counts returns the work counted so far.
func (l *Ledger) Counts() Counts {
	return Counts{Rebuilt: l.counts.rebuilt.Load(), HashedBytes: l.counts.hashedBytes.Load(), Built: l.counts.built.Load(),
		PeakClaims: l.counts.peakClaims.Load(), Prebuilt: l.counts.prebuilt.Load()}
}

// ClaimEach runs looks under mu, with claim claiming for one machine
// from ahead, and returns the wakes the claims owe. The caller holds the
// store's read lock.
func (l *Ledger) ClaimEach(st *model.State, ahead *BuiltAhead, looks func(claim func(machine string, max int) ([]wire.Work, time.Time))) *Owed {
	l.lock()
	looks(func(machine string, max int) ([]wire.Work, time.Time) {
		return l.claimLocked(st, machine, max, ahead)
	})
	return l.unlock()
}

// noStatus is the Status of a ledger that no status reads.
type noStatus struct{}

func (noStatus) Recount(...string) {}
func (noStatus) RecountAll()       {}
func (noStatus) Changed()          {}
