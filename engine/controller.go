package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/model"
)

// Store is what the engine needs of the control plane's replicated state.
// raftstore.Store provides it.
type Store interface {
	View(fn func(st *model.State) error) error
	Apply(ctx context.Context, cmd *model.Command) (*model.Response, error)
	WaitIndex(ctx context.Context, after uint64) (index uint64, reset bool, err error)
	Index() uint64
}

// InFlight is what a Store may also tell: the last entry in its log,
// committed or not, and whether its state reflects every entry up to an
// index. raftstore.Store provides it. A woken work poll waits only for
// the entries already in the log (Options.Window); with a store that
// cannot tell, it waits the whole Window.
type InFlight interface {
	LastIndex() uint64
	Applied(index uint64) bool
}

// Backoff spaces automatic retries of a failing hook (engine/schedule).
type Backoff = schedule.Backoff

// DefaultBackoff doubles from 5 s to 5 min, as DESIGN.md fixes.
var DefaultBackoff = schedule.DefaultBackoff

// DefaultUpdateStatus is the update-status timer's interval, Juju's 5 min.
const DefaultUpdateStatus = schedule.DefaultUpdateStatus

// Options tune a Controller; zero values take the defaults.
type Options struct {
	Backoff Backoff
	// Window bounds how long a woken work poll lets a burst of changes
	// land before stale units are handed out, so that they cost one
	// reconcile instead of several. With a store that says what is in
	// its log (InFlight), the wait ends as soon as the entries already
	// there when the poll woke are applied, usually at once: a fixed
	// wait put the whole Window between every commit and its hand-out.
	Window time.Duration
	// Lease is how long a unit handed to an agent stays claimed without a
	// report before it is handed out again.
	Lease time.Duration
	// AgentTTL is how long a machine's agent may stay silent before it is
	// marked lost and its units lose leadership.
	AgentTTL time.Duration
	Now      func() time.Time
	Log      hclog.Logger
	// IsLeader, when set, says whether this node leads the control
	// plane; only the leader keeps its views up to date as entries land.
	IsLeader func() bool
	// UpdateStatus is how long a settled unit of an old-hook or ops
	// charm waits after its last run before it gets update-status
	// (schedule.UpdateStatusDue): schedule.DefaultUpdateStatus when
	// zero; negative turns the timer off.
	UpdateStatus time.Duration
	// Served, when set, is called each time the work polls' looks are
	// all served and some were handed work: a burst of hand-outs ended
	// (gcidle.Collector.Quiet). Looks that found nothing, as the agents'
	// polls after their reports, do not count: a collection started then
	// ran into the next change, which an operator's script applies as
	// soon as the last report lands.
	Served func()
}

func (o *Options) defaults() {
	if o.Backoff.Min <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.Window <= 0 {
		o.Window = 20 * time.Millisecond
	}
	if o.Lease <= 0 {
		o.Lease = 15 * time.Minute
	}
	if o.AgentTTL <= 0 {
		o.AgentTTL = 30 * time.Second
	}
	if o.UpdateStatus == 0 {
		o.UpdateStatus = schedule.DefaultUpdateStatus
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = hclog.NewNullLogger()
	}
}

// Controller keeps every unit's universe current on the leading node and
// leases the units engine/schedule says may run to the agents that long
// poll for them.
//
// The rules (what is stale, which wave runs, when a failure retries, what
// a run is given) are engine/schedule's. The controller's state is kept by
// job: staleness (what each unit would see, and whether that moved),
// dispatch (who gets which work when) and status (what status shows and
// who waits for it to move); all three are guarded by mu (see the package
// doc for the lock order). Claims are soft state that a new leader
// rebuilds from scratch.
type Controller struct {
	store Store
	opts  Options

	mu    sync.Mutex
	stale staleness
	disp  dispatch
	stat  statusState
	work  WorkStats
	acts  actionState
}

// dispatch is who gets which work when: the queue of units that may need
// a run, the claims handed out and their leases, the long polls waiting
// for work and the wakes that reach them, the update-status timers and
// when each machine's agent was last heard. It owns every poll counter.
type dispatch struct {
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
	// looks batches the work polls' looks (handout.go).
	looks lookQueue
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
}

// statusState is what status shows beyond the state and the views: when
// each unit entered its phase, the counts kept between summaries, the last
// summary, the hook runs' history, and the generation its long polls wait
// on.
type statusState struct {
	// lastSummary is the last status summary, shared by the waiters
	// that ask at the same index and generation (summary.go).
	lastSummary *cachedSummary
	// tally keeps the summary's counts between summaries (tally.go).
	tally tally
	// changed wakes status long polls: views or phases moved.
	changed *generation
	hist    *History
	// phases is when status first showed each unit in its phase.
	phases map[string]phaseMark
}

// NewController returns a controller over store. Call Run to keep it in
// step with the state.
func NewController(store Store, opts Options) *Controller {
	opts.defaults()
	return &Controller{
		store: store,
		opts:  opts,
		stale: newStaleness(),

		disp: dispatch{
			queue:      schedule.NewQueue(opts.Backoff),
			claims:     map[string]*claim{},
			agents:     newAgents(),
			parked:     map[string]int{},
			pushed:     map[string]int{},
			runs:       map[string]int{},
			ready:      map[string]*broadcast{},
			wokeQueued: map[string]bool{},
			lastRun:    map[string]map[string]time.Time{},
		},
		stat: statusState{
			changed: newGeneration(),
			hist:    NewHistory(DefaultHistory),
		},
	}
}

// Run follows the state until ctx ends, rebuilding universes as entries
// are applied.
func (c *Controller) Run(ctx context.Context) error {
	var at uint64
	for {
		if c.opts.IsLeader == nil || c.opts.IsLeader() {
			if err := c.Refresh(); err != nil {
				return err
			}
		} else {
			// Only the leader hands out work; a follower keeps no views
			// up to date that nobody asks for, and builds them afresh
			// if it is asked (a stale status) or becomes the leader.
			c.forget()
		}
		at = c.store.Index()
		_, reset, err := c.store.WaitIndex(ctx, at)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("controller: watch state: %w", err)
		}
		if reset {
			c.forget()
		}
	}
}

// Changed is closed at the controller's next change of views or phases.
func (c *Controller) Changed() <-chan struct{} {
	return c.stat.changed.wait()
}

// ChangedSince is closed once what status shows moved past generation gen
// (Status.Generation): at once if it already has. A status long poll that
// passes the generation it last saw misses no change in between.
func (c *Controller) ChangedSince(gen uint64) <-chan struct{} {
	return c.stat.changed.since(gen)
}

// NoteChange moves the status generation for a change status shows that
// the controller does not hold (the API's "applying environment").
func (c *Controller) NoteChange() {
	c.stat.changed.note()
}

// forget drops every view: the next refresh rebuilds them all.
func (c *Controller) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stale.built() && len(c.disp.claims) == 0 {
		return
	}
	c.stale.forget()
	// Claims are the leader's: while another node leads, agents report
	// there, and claims kept here would hold the wave back on our return.
	c.disp.claims = map[string]*claim{}
	// Timers too: on our return every unit's starts afresh.
	c.disp.lastRun = map[string]map[string]time.Time{}
	c.acts = actionState{}
	c.stat.changed.note()
	c.wakeAll()
}

// WorkStats counts the controller's work: universes rebuilt and bytes
// hashed, for the benchmark of work per change, and work polls woken.
type WorkStats struct {
	Rebuilt     int64
	HashedBytes int64
	// Built counts universes built for hand-out (or explain) whose hash
	// was already known, so not hashed again.
	Built int64
	// PeakClaims is the most claims held at once; each holds the
	// universe it handed out, the controller's only universes in flight.
	PeakClaims int64
	// Wakeups counts work polls woken to look for work.
	Wakeups int64
	// Prebuilt counts universes handed out that were built ahead of
	// their claim, outside the controller's lock (prebuild).
	Prebuilt int64
	// Pushed counts work polls whose look the wake itself queued (push):
	// part of Wakeups.
	Pushed int64
	// Passes counts the passes that served looks (lookQueue).
	Passes int64
	// WokenTwice counts pushed polls that their machine's signal woke
	// before their answer did (push).
	WokenTwice int64
}

// Stats returns the work done so far.
func (c *Controller) Stats() WorkStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.work
	c.disp.looks.mu.Lock()
	w.WokenTwice = c.disp.looks.wokenTwice
	c.disp.looks.mu.Unlock()
	return w
}
