package engine

import (
	"sync"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/model"
)

// dispatch is who gets which work when: the queue of units that may need
// a run, the claims handed out and their leases, the long polls waiting
// for work and the wakes that reach them, the update-status timers and
// when each machine's agent was last heard. It owns every poll counter
// and the work counters (WorkStats).
//
// It is the one writer of the views: it consumes staleness's notes (and
// rebuilds views) under mu and the store's read lock, and passes the
// units whose phase may move to status (statusState.consume, mark).
// Under mu it calls staleness's methods, which take staleness's lock, and
// status's consume, mark and generation, which take only status's leaf
// locks, never statusState.mu; neither calls back into dispatch.
type dispatch struct {
	mu    sync.Mutex
	store Store
	opts  *Options
	stale *staleness
	stat  *statusState

	// queue holds the units that may need a run, so that claims look at
	// those and not at every unit.
	queue  *schedule.Queue
	claims map[string]*claim
	// lease fires when the earliest claim's lease ends (lease.go).
	lease leaseWatch
	// agents is when each machine's agent was last heard and its open
	// long polls (liveness.go), under a lock of its own.
	agents *agents
	// parked counts each machine's long polls asleep waiting for a wake.
	parked map[string]int
	// pushed counts the parked polls, by machine, whose looks a wake
	// pushed and no pass has served yet (push).
	pushed map[string]int
	// pushing are the looks pushed under mu and not queued yet: unlock
	// queues them in one lookQueue call, so that a pass takes every look
	// one critical section's wakes pushed, or none of them.
	pushing []*look
	// looks batches the work polls' looks (handout.go).
	looks lookQueue
	// ahead holds the universes built ahead for the pass under way, and
	// taken those its claims took (prebuild).
	ahead, taken map[string]*prebuilt
	// runs counts hand-outs per unit since the views were last rebuilt.
	runs map[string]int
	// ready wakes one machine's work polls: a unit of that machine was
	// queued, or what held its queued units back moved. An agent with
	// nothing to do is never woken by a change elsewhere.
	ready map[string]*broadcast
	// looking says a pass is answering a look; held are the wakes made
	// meanwhile (answerLocked).
	looking bool
	held    []heldWake
	// wokeQueued is wakeQueued's set of machines woken, empty between
	// calls.
	wokeQueued map[string]bool
	// lastRun is when each unit last ran, by machine, for the
	// update-status timer (timer.go).
	lastRun map[string]map[string]time.Time
	work    WorkStats
	// acts is what was handed out of the queued operations (actions.go).
	acts actionState
}

func newDispatch(store Store, opts *Options, stale *staleness, stat *statusState) *dispatch {
	return &dispatch{
		store:      store,
		opts:       opts,
		stale:      stale,
		stat:       stat,
		queue:      schedule.NewQueue(opts.Backoff),
		claims:     map[string]*claim{},
		agents:     newAgents(),
		parked:     map[string]int{},
		pushed:     map[string]int{},
		runs:       map[string]int{},
		ready:      map[string]*broadcast{},
		wokeQueued: map[string]bool{},
		lastRun:    map[string]map[string]time.Time{},
	}
}

// lock takes mu.
func (d *dispatch) lock() { d.mu.Lock() }

// unlock queues the looks pushed under mu, all in one call, and releases
// mu.
func (d *dispatch) unlock() {
	if len(d.pushing) > 0 {
		d.looks.enqueue(d, d.pushing...)
		clear(d.pushing)
		d.pushing = d.pushing[:0]
	}
	d.mu.Unlock()
}

// refresh brings the views up to st and acts on what moved. The caller
// holds the store's read lock.
func (d *dispatch) refresh(st *model.State) {
	d.lock()
	defer d.unlock()
	d.refreshLocked(st)
}

// forget drops every view, claim and timer: the next refresh rebuilds
// them all.
func (d *dispatch) forget() {
	d.lock()
	defer d.unlock()
	if !d.stale.built() && len(d.claims) == 0 {
		return
	}
	d.stale.forget()
	// Claims are the leader's: while another node leads, agents report
	// there, and claims kept here would hold the wave back on our return.
	d.claims = map[string]*claim{}
	// Timers too: on our return every unit's starts afresh.
	d.lastRun = map[string]map[string]time.Time{}
	d.acts = actionState{}
	d.stat.changed.note()
	d.wakeAll()
}

// lastHeard is when machine's agent was last heard: now while one of
// its polls is open.
func (d *dispatch) lastHeard(machine string, now time.Time) time.Time {
	return d.agents.lastHeard(machine, now)
}

// heard records that machine's agent is alive now.
func (d *dispatch) heard(machine string) { d.agents.heard(machine, d.opts.Now()) }

// stats returns the work counted so far.
func (d *dispatch) stats() WorkStats {
	d.lock()
	w := d.work
	d.unlock()
	w.WokenTwice = d.looks.twice()
	return w
}

// claimMark is what status needs of a claim: when it was handed out,
// when its lease ends, and whether it is an update-status run. The zero
// value is no claim.
type claimMark struct {
	claimed   bool
	timer     bool
	at, until time.Time
}

// refreshed brings the views up to st, as refresh does, and returns a
// mark of every claim, which status reads without mu. The caller holds
// the store's read lock.
func (d *dispatch) refreshed(st *model.State) map[string]claimMark {
	d.lock()
	defer d.unlock()
	d.refreshLocked(st)
	return d.marksLocked()
}

// current brings unit's view up to st and returns it with the universe
// it stands for and the Seen record that universe's reconcile leaves, or
// nil if the unit is gone, and a mark of every claim (refreshed).
func (d *dispatch) current(st *model.State, unit string) (*view, *charmapi.Universe, *model.Seen, map[string]claimMark) {
	d.lock()
	defer d.unlock()
	v, uni, seen := d.currentView(st, unit)
	return v, uni, seen, d.marksLocked()
}

func (d *dispatch) marksLocked() map[string]claimMark {
	out := make(map[string]claimMark, len(d.claims))
	for name, cl := range d.claims {
		out[name] = claimMark{claimed: true, timer: cl.timer, at: cl.at, until: cl.until}
	}
	return out
}

// What follows is how the tests drive and observe dispatch without its
// fields: each method takes mu itself.

// claimOf is unit's claim, nil if none. A claim is never changed once
// made.
func (d *dispatch) claimOf(unit string) *claim {
	d.lock()
	defer d.unlock()
	return d.claims[unit]
}

// claimCount is how many claims are held.
func (d *dispatch) claimCount() int {
	d.lock()
	defer d.unlock()
	return len(d.claims)
}

// unclaim drops unit's claim, as if its lease had ended.
func (d *dispatch) unclaim(unit string) {
	d.lock()
	defer d.unlock()
	delete(d.claims, unit)
}

// parkedOn is how many of machine's polls are parked.
func (d *dispatch) parkedOn(machine string) int {
	d.lock()
	defer d.unlock()
	return d.parked[machine]
}

// listen makes the wake-up signal of each machine, as a first poll
// does, and queues every unit that has a view: every machine then has a
// wake to take.
func (d *dispatch) listen(machines ...string) (queued int) {
	d.lock()
	defer d.unlock()
	for _, m := range machines {
		d.readyFor(m)
	}
	for _, name := range d.stale.names() {
		if v := d.stale.view(name); v != nil {
			d.readyFor(v.machine)
			d.queue.Add(name)
		}
	}
	return d.queue.Len()
}

// wakeNow wakes machine's polls, as a change of its units does.
func (d *dispatch) wakeNow(machine string) {
	d.lock()
	defer d.unlock()
	d.wake(machine)
}

// lookNow makes each look of ls at st, as a pass does, without the
// pass's build-ahead. The caller holds the store's read lock.
func (d *dispatch) lookNow(st *model.State, ls ...*look) {
	d.lock()
	defer d.unlock()
	for _, l := range ls {
		d.lookLocked(st, l)
	}
}

// asleepOn is how many of machine's polls are asleep, their looks
// waiting for a push.
func (q *lookQueue) asleepOn(machine string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.asleep[machine])
}

// isServing says whether a server of the queue runs.
func (q *lookQueue) isServing() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.serving
}
