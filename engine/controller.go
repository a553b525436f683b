package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/charmapi"
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

// Options tune a Controller; zero values take the defaults.
type Options struct {
	Backoff Backoff
	// Window lets a burst of changes land before stale units are handed
	// out, so that they cost one reconcile instead of several.
	Window time.Duration
	// Lease is how long a unit handed to an agent stays claimed without a
	// report before it is handed out again.
	Lease time.Duration
	// AgentTTL is how long a machine's agent may stay silent before it is
	// marked lost and its units lose leadership.
	AgentTTL time.Duration
	Now      func() time.Time
	Log      hclog.Logger
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
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = hclog.NewNullLogger()
	}
}

// Controller tracks every unit's universe and hands stale units to agents.
// It runs on the node that leads the control plane; its claims ("this unit
// is reconciling") are soft state that a new leader rebuilds from scratch.
type Controller struct {
	store Store
	opts  Options

	mu      sync.Mutex
	index   uint64
	views   map[string]*view
	claims  map[string]*claim
	last    map[string]*charmapi.Universe
	contact map[string]time.Time
	// polling counts each machine's open long polls: an agent waiting
	// for work is alive, however long it waits.
	polling map[string]int
	changed chan struct{}
	hist    *History
}

// view is the cached universe of one unit at the controller's index.
type view struct {
	uni     *charmapi.Universe
	seen    *model.Seen
	hash    string
	machine string
	member  bool // placed on a registered machine
}

// claim is a unit handed to an agent and not yet reported.
type claim struct {
	machine string
	hash    string
	uni     *charmapi.Universe
	seen    *model.Seen
	until   time.Time
}

// NewController returns a controller over store. Call Run to keep it in
// step with the state.
func NewController(store Store, opts Options) *Controller {
	opts.defaults()
	return &Controller{
		store:   store,
		opts:    opts,
		views:   map[string]*view{},
		claims:  map[string]*claim{},
		last:    map[string]*charmapi.Universe{},
		contact: map[string]time.Time{},
		polling: map[string]int{},
		changed: make(chan struct{}),
		hist:    NewHistory(DefaultHistory),
	}
}

// Run follows the state until ctx ends, rebuilding universes as entries
// are applied.
func (c *Controller) Run(ctx context.Context) error {
	var at uint64
	for {
		if err := c.Refresh(); err != nil {
			return err
		}
		c.mu.Lock()
		at = c.index
		c.mu.Unlock()
		_, reset, err := c.store.WaitIndex(ctx, at)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("controller: watch state: %w", err)
		}
		if reset {
			c.mu.Lock()
			c.views = map[string]*view{}
			c.last = map[string]*charmapi.Universe{}
			c.mu.Unlock()
		}
	}
}

// Refresh brings the cached universes up to the store's applied index.
func (c *Controller) Refresh() error {
	return c.store.View(func(st *model.State) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.refreshLocked(st)
		return nil
	})
}

// refreshLocked rebuilds the views from st; the caller holds mu and the
// store's read lock, so views and state agree.
func (c *Controller) refreshLocked(st *model.State) {
	if st.Index == c.index && len(c.views) == len(st.Units) {
		return
	}
	views := make(map[string]*view, len(st.Units))
	for name, u := range st.Units {
		uni, seen := Build(st, name)
		_, registered := st.Machines[u.Machine]
		views[name] = &view{uni: uni, seen: seen, hash: Hash(uni), machine: u.Machine, member: registered}
	}
	for name := range c.claims {
		if _, ok := views[name]; !ok {
			delete(c.claims, name)
		}
	}
	for name := range c.last {
		if _, ok := views[name]; !ok {
			delete(c.last, name)
		}
	}
	c.views = views
	c.index = st.Index
	close(c.changed)
	c.changed = make(chan struct{})
}

// Work is one stale unit handed to an agent.
type Work struct {
	Unit     string             `json:"unit"`
	Hash     string             `json:"hash"`
	Charm    string             `json:"charm"`
	Legacy   bool               `json:"legacy,omitempty"`
	Universe *charmapi.Universe `json:"universe"`
	// Environment, Principal, Status and Ports are what old hooks read
	// back through the hook tools beyond the universe.
	Environment string           `json:"environment,omitempty"`
	Principal   string           `json:"principal,omitempty"`
	Status      *charmapi.Status `json:"status,omitempty"`
	Ports       []string         `json:"ports,omitempty"`
}

// Claim waits up to wait for stale units on machine, claims them for the
// caller and returns them. It returns no work, and no error, when the wait
// ends first.
func (c *Controller) Claim(ctx context.Context, machine string, max int, wait time.Duration) ([]Work, error) {
	deadline := c.opts.Now().Add(wait)
	c.mu.Lock()
	c.polling[machine]++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.polling[machine]--
		c.contact[machine] = c.opts.Now()
		c.mu.Unlock()
	}()
	for {
		c.Touch(machine)
		c.mu.Lock()
		ch := c.changed
		c.mu.Unlock()
		var work []Work
		var next time.Time
		err := c.store.View(func(st *model.State) error {
			c.mu.Lock()
			defer c.mu.Unlock()
			work, next = c.claimLocked(st, machine, max)
			return nil
		})
		if err != nil || len(work) > 0 {
			return work, err
		}
		now := c.opts.Now()
		if !now.Before(deadline) {
			return nil, nil
		}
		sleep := deadline.Sub(now)
		if !next.IsZero() && next.Sub(now) < sleep {
			sleep = max0(next.Sub(now))
		}
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		case <-ch:
			t.Stop()
			// Let the rest of a burst land before handing work out.
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(c.opts.Window):
			}
		}
	}
}

func max0(d time.Duration) time.Duration {
	if d < 0 {
		return 0
	}
	return d
}

// claimLocked picks the dispatchable units on machine. It also returns
// the earliest future retry time among that machine's failing units.
func (c *Controller) claimLocked(st *model.State, machine string, max int) ([]Work, time.Time) {
	c.refreshLocked(st)
	now := c.opts.Now()
	var names []string
	var next time.Time
	for name, v := range c.views {
		if v.machine != machine {
			continue
		}
		if cl, ok := c.claims[name]; ok && now.Before(cl.until) {
			continue
		}
		u := st.Units[name]
		ok, retry := dispatchable(u, v, now)
		if ok {
			names = append(names, name)
		} else if !retry.IsZero() && (next.IsZero() || retry.Before(next)) {
			next = retry
		}
	}
	sort.Slice(names, func(i, j int) bool { return model.UnitLess(names[i], names[j]) })
	if max > 0 && len(names) > max {
		names = names[:max]
	}
	work := make([]Work, 0, len(names))
	for _, name := range names {
		v := c.views[name]
		uni := c.dress(st.Units[name], v)
		ch := st.Charms[uni.Charm]
		c.claims[name] = &claim{machine: machine, hash: v.hash, uni: &uni, seen: v.seen, until: now.Add(c.opts.Lease)}
		u := st.Units[name]
		work = append(work, Work{Unit: name, Hash: v.hash, Charm: uni.Charm, Legacy: ch != nil && ch.Legacy, Universe: &uni,
			Environment: st.Name, Principal: u.Principal, Status: &charmapi.Status{State: u.Status.State, Message: u.Status.Message}, Ports: u.Ports})
	}
	return work, next
}

// dispatchable says whether a unit should run now; if not only because a
// retry is not due yet, it returns when it will be.
func dispatchable(u *model.Unit, v *view, now time.Time) (bool, time.Time) {
	if u == nil || !v.member || u.Life == model.Dead {
		return false, time.Time{}
	}
	if u.Error != nil {
		switch {
		case u.Resolved != nil:
			return true, time.Time{}
		case u.Error.Kind == model.ErrDiverged:
			return false, time.Time{}
		case u.Error.Hash != v.hash:
			return true, time.Time{}
		}
		retry := time.Unix(0, u.Error.RetryAt)
		if !now.Before(retry) {
			return true, time.Time{}
		}
		return false, retry
	}
	return v.hash != u.Reconciled, time.Time{}
}

// Release gives up an agent's claims on machine, e.g. when it restarts.
func (c *Controller) Release(machine string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, cl := range c.claims {
		if cl.machine == machine {
			delete(c.claims, name)
		}
	}
	c.contact[machine] = c.opts.Now()
}

// Report is what an agent says about one hook run.
type Report struct {
	Unit string `json:"unit"`
	Hash string `json:"hash"`
	// Output is the hook's stdout: the result JSON.
	Output []byte `json:"output,omitempty"`
	// Error is set when the hook failed (exit status, timeout, ...).
	Error    string        `json:"error,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`
	// Stderr is the tail of the hook's standard error, for the history.
	Stderr string `json:"stderr,omitempty"`
}

// ErrStaleReport means the report is for a universe this controller no
// longer knows; the unit will simply be handed out again.
var ErrStaleReport = errors.New("report for a universe that is no longer current")

// Accept turns reports from machine's agent into one replicated command.
// Reports for units this controller did not hand out (say, before a
// leader change) are taken only when they match the current universe.
func (c *Controller) Accept(ctx context.Context, machine string, reports []Report) (*model.Response, error) {
	if len(reports) == 0 {
		return &model.Response{}, nil
	}
	now := c.opts.Now()
	var results []model.Result
	var stale []string
	c.mu.Lock()
	c.contact[machine] = now
	for _, rep := range reports {
		cl := c.claims[rep.Unit]
		if cl == nil || cl.hash != rep.Hash {
			v := c.views[rep.Unit]
			if v == nil || v.hash != rep.Hash || v.machine != machine {
				stale = append(stale, rep.Unit)
				continue
			}
			cl = &claim{machine: machine, hash: v.hash, uni: v.uni, seen: v.seen}
		}
		if cl.machine != machine {
			stale = append(stale, rep.Unit)
			continue
		}
		res := c.translate(cl, rep, now)
		results = append(results, *res)
	}
	c.mu.Unlock()
	c.hist.record(c.store, reports, results, now)
	if len(results) == 0 {
		return &model.Response{Skipped: stale}, nil
	}
	resp, err := c.store.Apply(ctx, &model.Command{Op: model.OpResults, Time: now.UnixNano(), Results: results})
	if err != nil {
		return nil, fmt.Errorf("apply %d results: %w", len(results), err)
	}
	// Catch the cache up before dropping the claims, so the units do not
	// look stale against the universe they just reconciled.
	if err := c.Refresh(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	for _, r := range results {
		if cl := c.claims[r.Unit]; cl != nil && cl.hash == r.Hash {
			delete(c.claims, r.Unit)
			if r.Error == "" {
				c.last[r.Unit] = cl.uni
			}
		}
	}
	c.mu.Unlock()
	for _, u := range stale {
		resp.Skipped = append(resp.Skipped, u+": universe moved on; it will run again")
	}
	return resp, nil
}

// translate checks one report and makes it a model.Result. Called with mu.
func (c *Controller) translate(cl *claim, rep Report, now time.Time) *model.Result {
	fail := func(msg string) *model.Result {
		attempt := 1
		if cl.uni != nil && cl.uni.Attempt > 0 {
			attempt = cl.uni.Attempt
		}
		return &model.Result{Unit: rep.Unit, Hash: rep.Hash, Seen: cl.seen, Error: msg,
			RetryAt: now.Add(c.opts.Backoff.Delay(attempt)).UnixNano()}
	}
	if rep.Error != "" {
		return fail(rep.Error)
	}
	res, err := DecodeResult(cl.uni, rep.Output)
	if err != nil {
		return fail(err.Error())
	}
	res.Hash, res.Seen = rep.Hash, cl.seen
	for _, ch := range Diff(c.last[rep.Unit], cl.uni) {
		if c.last[rep.Unit] == nil {
			break
		}
		key := ch.Key
		if ch.Writer != "" {
			key += " (written by " + ch.Writer + ")"
		}
		res.Churn = append(res.Churn, key)
	}
	return res
}

// Universe returns what unit's hook would be given now, events included.
func (c *Controller) Universe(unit string) (*charmapi.Universe, error) {
	var out *charmapi.Universe
	err := c.store.View(func(st *model.State) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.refreshLocked(st)
		v, ok := c.views[unit]
		if !ok {
			return fmt.Errorf("unit %s does not exist (units: %d in the environment)", unit, len(st.Units))
		}
		uni := c.dress(st.Units[unit], v)
		out = &uni
		return nil
	})
	return out, err
}

// dress completes a cached universe for a run: the attempt number and the
// legacy events since the unit's last successful reconcile.
func (c *Controller) dress(u *model.Unit, v *view) charmapi.Universe {
	uni := *v.uni
	uni.Attempt = 1
	if u.Error != nil && u.Error.Hash == v.hash {
		uni.Attempt = u.Error.Attempts + 1
	}
	uni.Events = legacyEvents(u.Name, u.Seen, v.seen, &uni)
	return uni
}
