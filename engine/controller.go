package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/engine/wire"
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
	// there when the poll woke are applied, usually at once, so that the
	// Window does not stand between every commit and its hand-out.
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
// a run is given) are engine/schedule's. The controller wires three
// components, each with its own lock (the package doc gives the order):
// staleness (what each unit would see, and whether that moved), dispatch
// (who gets which work when) and status (what status shows and who waits
// for it to move). Staleness's change notes are consumed by dispatch,
// which passes the units whose phase may move on to status. Claims are
// soft state that a new leader rebuilds from scratch.
type Controller struct {
	store Store
	opts  *Options
	stale *staleness
	disp  *dispatch
	stat  *statusState
}

// NewController returns a controller over store. Call Run to keep it in
// step with the state.
func NewController(store Store, opts Options) *Controller {
	opts.defaults()
	o := &opts
	stale := newStaleness()
	stat := newStatusState(o.Now, stale)
	return &Controller{store: store, opts: o, stale: stale, stat: stat, disp: newDispatch(store, o, stale, stat)}
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
			c.disp.forget()
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
			c.disp.forget()
		}
	}
}

// Refresh brings the views up to the store's applied index.
func (c *Controller) Refresh() error {
	return c.store.View(func(st *model.State) error {
		c.disp.refresh(st)
		return nil
	})
}

// Claim waits up to wait for stale units on machine, claims them for the
// caller and returns them. It returns no work, and no error, when the wait
// ends first.
func (c *Controller) Claim(ctx context.Context, machine string, max int, wait time.Duration) ([]wire.Work, error) {
	return c.disp.poll(ctx, machine, max, wait)
}

// Release gives up an agent's claims on machine, e.g. when it restarts.
func (c *Controller) Release(machine string) { c.disp.release(machine) }

// Running takes an agent's word for which units it is running: claims of
// its machine on other units are dropped, so that a result lost on the way
// (an agent restarted, a report taken by another leader) does not hold a
// unit, and the wave behind it, until the lease runs out. Claims younger
// than a heartbeat may not have reached the agent yet and are kept.
func (c *Controller) Running(machine string, units []string) { c.disp.running(machine, units) }

// Touch records that machine's agent is alive.
func (c *Controller) Touch(machine string) { c.disp.heard(machine) }

// Status reports every unit's phase at the controller's index.
func (c *Controller) Status() (*Status, error) {
	var out *Status
	err := c.store.View(func(st *model.State) error {
		out = c.stat.status(st, c.disp.refreshed(st))
		return nil
	})
	return out, err
}

// Universe returns what unit's hook would be given now, events included.
func (c *Controller) Universe(unit string) (*charmapi.Universe, error) {
	var out *charmapi.Universe
	err := c.store.View(func(st *model.State) error {
		v, built, seen, _ := c.disp.current(st, unit)
		if st.Units[unit] == nil {
			return NoUnitError(st, unit)
		}
		if v == nil || built == nil {
			return fmt.Errorf("unit %s does not exist (units: %d in the environment)", unit, len(st.Units))
		}
		uni := schedule.RunUniverse(st, st.Units[unit], built, v.hash, seen)
		out = &uni
		return nil
	})
	return out, err
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
	// their claim, outside dispatch's lock (prebuild).
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
func (c *Controller) Stats() WorkStats { return c.disp.stats() }
