package engine

import (
	"context"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/ledger"
	"github.com/fixpoint/fixpoint/engine/liveness"
	"github.com/fixpoint/fixpoint/engine/passq"
	"github.com/fixpoint/fixpoint/engine/waiters"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// Controller keeps every unit's universe current on the leading node and
// leases the units engine/schedule says may run to the agents that long
// poll for them.
//
// The rules (what is stale, which wave runs, when a failure retries, what
// a run is given) are engine/schedule's. The controller wires components
// that each own their state and lock (engine/DESIGN.md gives the order):
// staleness (what each unit would see), the ledger (who holds which
// work), handout (the polls, their passes and wakes, the reports),
// status (what status shows and who waits for it to move) and the reads
// that answer at one read of the state. Every method here is one call
// into them. Claims are soft state that a new leader rebuilds from
// scratch.
type Controller struct {
	store Store
	opts  *Options
	work  *handout
	stat  *statusState
	reads *reads
}

// NewController returns a controller over store. Call Start (or Run) to
// keep it in step with the state.
func NewController(store Store, opts Options) *Controller {
	opts.defaults()
	o := &opts
	told := &statusTold{}
	l := ledger.New(ledger.Options{Backoff: o.Backoff, Lease: o.Lease, UpdateStatus: o.UpdateStatus, Now: o.Now, Status: told, Changes: store.Changes},
		ledger.Builder{Build: Build, BuildHashed: buildHashed, Result: ResultOf})
	stat := newStatusState(o.Now, l.Views())
	told.changed, told.inbox = stat.changed, &stat.inbox
	work := newHandout(store, o, l)
	return &Controller{store: store, opts: o, work: work, stat: stat, reads: &reads{store: store, opts: o, work: work, stat: stat, views: l.Views()}}
}

// newHandout returns the pipeline between l and the agents, its pass
// queue serving the looks a pass at a time (servePass).
func newHandout(store Store, opts *Options, l *ledger.Ledger) *handout {
	contacts := opts.Contacts
	if contacts == nil {
		contacts = liveness.New()
	}
	h := &handout{store: store, opts: opts, ledger: l, waiters: waiters.New[*pollLook](), contacts: contacts}
	h.passes = passq.New(maxPass, h.servePass, opts.Served)
	return h
}

// Start runs the controller's loops until ctx ends: following the state
// (Run), the agents' liveness (WatchAgents), the secrets' schedule
// (WatchSecrets) and the timeline (SampleTimeline), the watches deciding
// only while Options.IsLeader says this node leads. The channel is closed
// once every loop has returned.
func (c *Controller) Start(ctx context.Context) <-chan struct{} { return runLoops(ctx, c) }

// Run follows the state until ctx ends, bringing the views up to each
// entry applied while this node leads.
func (c *Controller) Run(ctx context.Context) error { return c.work.follow(ctx) }

// Refresh brings the views up to the store's applied index.
func (c *Controller) Refresh() error { return c.work.refresh() }

// WaitForWork is a work poll of machine's agent: it waits up to wait for
// units of machine that may run, claims up to max of them for the caller
// and returns them. It returns no work, and no error, when the wait ends
// first.
func (c *Controller) WaitForWork(ctx context.Context, machine string, max int, wait time.Duration) ([]wire.Work, error) {
	return c.work.waitForWork(ctx, machine, max, wait)
}

// Look is one look of a poll of machine's agent, made in a pass: it
// claims up to max units of machine that may run and returns them, with
// when one of them falls due next (zero when none is timed). A poll that
// sleeps on a fleet's shared signals (Options.Machines) between its
// looks makes them with it.
func (c *Controller) Look(ctx context.Context, machine string, max int) ([]wire.Work, time.Time, error) {
	return c.work.look(ctx, machine, max)
}

// Burst lets the entries in the log at a wake (last, its signal's Last)
// land before a woken poll looks, as WaitForWork's polls do.
func (c *Controller) Burst(ctx context.Context, last uint64) error { return c.work.burst(ctx, last) }

// Accept turns reports from machine's agent into one replicated command;
// a report whose claim is gone is skipped, and its unit runs again.
func (c *Controller) Accept(ctx context.Context, machine string, reports []wire.Report) (*model.Response, error) {
	return c.work.accept(ctx, c.stat.hist, machine, reports)
}

// Release gives up an agent's claims on machine, e.g. when it restarts.
func (c *Controller) Release(machine string) { c.work.release(machine) }

// ReleaseExcept takes an agent's word for which units it is running:
// claims of its machine on other units are dropped, so that a result lost
// on the way (an agent restarted, a report taken by another leader) does
// not hold a unit, and the wave behind it, until the lease runs out.
// Claims younger than a heartbeat may not have reached the agent yet and
// are kept.
func (c *Controller) ReleaseExcept(machine string, running []string) {
	c.work.releaseExcept(machine, running)
}

// GiveBack returns work this controller handed to machine's agent that
// never reached it (a poll answered by another environment's controller
// first, engine/fleet): the units are handed out again at once rather
// than held until their claims are dropped.
func (c *Controller) GiveBack(machine string, work []wire.Work) {
	if len(work) > 0 {
		c.work.apply(c.work.ledger.GiveBack(machine, work))
	}
}

// Heartbeat records that machine's agent is alive.
func (c *Controller) Heartbeat(machine string) { c.work.heartbeat(machine) }

// StartAction records that machine's agent takes operation id: it runs
// once. A refusal (started already, finished, not on that machine) says
// the agent must not run it.
func (c *Controller) StartAction(ctx context.Context, machine string, id int) error {
	return startAction(ctx, c.store, c.opts.Now(), machine, id)
}

// FinishAction records what operation rep.ID came to on machine and
// applies what it wrote, decoded against the unit's universe as a hook's
// result is.
func (c *Controller) FinishAction(ctx context.Context, machine string, rep *wire.ActionReport) (*model.Response, error) {
	return finishAction(ctx, c.store, c.opts.Now(), machine, rep)
}

// WatchAgents marks machines whose agents stay silent past the TTL as
// lost, and back when they return, while isLeader says this node leads.
func (c *Controller) WatchAgents(ctx context.Context, isLeader func() bool) {
	c.work.watchAgents(ctx, isLeader)
}

// WatchSecrets records secrets' rotations and expiries as they come due,
// while isLeader says this node leads, until ctx ends.
func (c *Controller) WatchSecrets(ctx context.Context, isLeader func() bool) {
	watchSecrets(ctx, c.store, c.opts, isLeader)
}

// Status reports every unit's phase at the controller's index.
func (c *Controller) Status() (*Status, error) { return c.reads.status() }

// Summary reports what Status would, without a line per unit: counts per
// phase and per service, and at most limit units in error and blocked
// (SummaryLimit when limit <= 0). Its cost follows what changed since
// the last summary, not the environment.
func (c *Controller) Summary(limit int) (*Summary, error) { return c.reads.summary(limit) }

// Unit is unit name's detail, read from the state and this controller's
// phases. An error names what is there instead.
func (c *Controller) Unit(name string) (*UnitDetail, error) { return c.reads.unit(name) }

// Universe returns what unit's hook would be given now, events included.
func (c *Controller) Universe(unit string) (*charmapi.Universe, error) {
	return c.reads.universe(unit)
}

// Explain says why unit is stale, settled or in error.
func (c *Controller) Explain(unit string) (*Explanation, error) { return c.reads.explain(unit) }

// History is the hook runs this node recorded.
func (c *Controller) History() *History { return c.stat.hist }

// Timeline returns the units per phase over time since the last apply,
// as this node counted them (SampleTimeline keeps it current).
func (c *Controller) Timeline() *Timeline { return c.stat.timeline.snapshot() }

// SampleTimeline counts the units by phase each time what status shows
// moves, while this node leads, until ctx ends.
func (c *Controller) SampleTimeline(ctx context.Context) { c.reads.sampleTimeline(ctx) }

// Changed is closed at the controller's next change of views or phases.
func (c *Controller) Changed() <-chan struct{} { return c.stat.changed.wait() }

// ChangedSince is closed once what status shows moved past generation gen
// (Status.Generation): at once if it already has. A status long poll that
// passes the generation it last saw misses no change in between.
func (c *Controller) ChangedSince(gen uint64) <-chan struct{} { return c.stat.changed.since(gen) }

// NoteChange moves the status generation for a change status shows that
// the controller does not hold (the API's "applying environment").
func (c *Controller) NoteChange() { c.stat.changed.note() }

// Stats returns the work done so far.
func (c *Controller) Stats() WorkStats { return c.reads.stats() }

// runLoops runs c's loops until ctx ends (Controller.Start); the channel is
// closed once every one has returned. A loop that fails is logged: the
// node serves on, as a follower does.
func runLoops(ctx context.Context, c *Controller) <-chan struct{} {
	isLeader := c.opts.IsLeader
	if isLeader == nil {
		isLeader = func() bool { return true }
	}
	done := make(chan struct{})
	loops := []func(){
		func() {
			if err := c.Run(ctx); err != nil {
				c.opts.Log.Error("controller stopped", "error", err)
			}
		},
		func() { c.SampleTimeline(ctx) },
		func() { c.WatchAgents(ctx, isLeader) },
		func() { c.WatchSecrets(ctx, isLeader) },
	}
	left := make(chan struct{}, len(loops))
	for _, loop := range loops {
		go func() {
			defer func() { left <- struct{}{} }()
			loop()
		}()
	}
	go func() {
		for range loops {
			<-left
		}
		close(done)
	}()
	return done
}
