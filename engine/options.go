package engine

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/engine/liveness"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/engine/waiters"
	"github.com/fixpoint/fixpoint/model"
)

// Store is what the engine needs of the control plane's replicated state.
// raftstore.Store provides it.
type Store interface {
	View(fn func(st *model.State) error) error
	Apply(ctx context.Context, cmd *model.Command) (*model.Response, error)
	WaitIndex(ctx context.Context, after uint64) (index uint64, reset bool, err error)
	Index() uint64
	// Changes is the state's journal (model.Journal.ChangesSince), read
	// inside View: what changed after since, false when it does not
	// reach back that far.
	Changes(since uint64) ([]model.Touched, bool)
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
	// Contacts, when set, are the agents' contacts this controller
	// shares with the other controllers of a fleet (engine/fleet), so
	// that an agent heard by any of them is alive for all, and one
	// liveness watch (WatchAgents) judges the cluster's machines. Nil
	// gives the controller contacts of its own.
	Contacts *liveness.Contacts
	// Machines, when set, are the machines' wake-up signals this
	// controller shares with the other controllers of a fleet: every
	// wake it makes closes them too, so that a poll waiting on every
	// environment sleeps on one signal (engine/fleet).
	Machines *waiters.Machines
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
	// Wakeups counts work polls woken to look for work, those asleep
	// on a fleet's shared signals (Options.Machines) included.
	Wakeups int64
	// Prebuilt counts universes handed out that were built ahead of
	// their claim, outside the ledger's lock (buildAhead).
	Prebuilt int64
	// Pushed counts work polls whose look the wake itself queued: part
	// of Wakeups.
	Pushed int64
	// Passes counts the passes that served looks (passq).
	Passes int64
	// WokenTwice counts pushed polls that their machine's signal woke
	// before their answer did.
	WokenTwice int64
	// Asleep is how many work polls are asleep now, waiting for a wake.
	Asleep int64
	// Recounted counts the units status summaries recounted (recount.go):
	// what a summary costs follows what changed.
	Recounted int64
}
