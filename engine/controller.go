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
	// IsLeader, when set, says whether this node leads the control
	// plane; only the leader keeps its views up to date as entries land.
	IsLeader func() bool
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
	// stale holds units that may need a run, so claims look at those
	// and not at every unit.
	stale map[string]bool
	// dirty holds units whose view is out of date, and how.
	dirty map[string]dirt
	work  WorkStats
	// runs counts hand-outs per unit since the views were last rebuilt.
	runs    map[string]int
	changed chan struct{}
	hist    *History
}

// suspect is how many runs since the views were rebuilt make a unit worth
// watching for divergence.
const suspect = model.DivergeBound / 4

// dirt says how a view is out of date.
type dirt uint8

const (
	clean dirt = iota
	// ownWrites: the unit's own settings or state moved. Its hash, which
	// leaves those out, still holds; its content must be rebuilt before
	// it is handed out.
	ownWrites
	// moved: something the unit sees changed: it is stale, and its hash
	// is unknown until rebuilt.
	moved
)

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
	at      time.Time // when it was handed out
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
		stale:   map[string]bool{},
		dirty:   map[string]dirt{},
		runs:    map[string]int{},
		changed: make(chan struct{}),
		hist:    NewHistory(DefaultHistory),
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
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// forget drops every view: the next refresh rebuilds them all.
func (c *Controller) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.views == nil && len(c.claims) == 0 {
		return
	}
	c.views, c.index = nil, 0
	c.last = map[string]*charmapi.Universe{}
	// Claims are the leader's: while another node leads, agents report
	// there, and claims kept here would hold the wave back on our return.
	c.claims = map[string]*claim{}
	close(c.changed)
	c.changed = make(chan struct{})
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

// refreshLocked brings the views up to st; the caller holds mu and the
// store's read lock, so views and state agree. Only the universes that can
// see what changed are rebuilt; a gap in the state's journal (a restart, a
// restore, an operator change) rebuilds them all.
func (c *Controller) refreshLocked(st *model.State) {
	if st.Index == c.index && c.views != nil {
		return
	}
	changes, ok := st.ChangesSince(c.index)
	for _, t := range changes {
		ok = ok && !t.All
	}
	if !ok || c.views == nil {
		c.rebuildAll(st)
	} else {
		affected, self := map[string]bool{}, map[string]bool{}
		for _, t := range changes {
			for _, ub := range t.Settings {
				c.watchers(st, ub.Unit, ub.Relation, affected)
			}
			for _, id := range t.Apps {
				if r := st.Relations[id]; r != nil {
					for _, e := range r.Endpoints {
						for _, u := range st.UnitsOf(e.Service) {
							affected[u.Name] = true
						}
					}
				}
			}
			for _, svc := range t.LeaderData {
				for _, u := range st.UnitsOf(svc) {
					affected[u.Name] = true
				}
			}
			for _, name := range t.Units {
				self[name] = true
			}
		}
		// A unit's own writes do not change its hash, so they do not
		// make it stale; but the universe it is handed next must carry
		// them (its local settings, its state): its view is dirty.
		for name := range self {
			if !affected[name] && c.dirty[name] != moved {
				c.dirty[name] = ownWrites
				c.markStale(st, name)
			}
		}
		// Everyone who sees a change is stale; their universes are
		// rebuilt and hashed only when they are handed out, once however
		// many changes landed meanwhile.
		for name := range affected {
			if _, ok := st.Units[name]; !ok {
				delete(c.views, name)
				delete(c.stale, name)
				delete(c.dirty, name)
				continue
			}
			c.dirty[name] = moved
			c.stale[name] = true
		}
	}
	c.index = st.Index
	close(c.changed)
	c.changed = make(chan struct{})
}

// rebuildAll rebuilds every view.
func (c *Controller) rebuildAll(st *model.State) {
	c.views = make(map[string]*view, len(st.Units))
	c.stale = map[string]bool{}
	c.dirty = map[string]dirt{}
	c.runs = map[string]int{}
	for name := range st.Units {
		c.rebuild(st, name)
		// Keep the hash, not the universe: a new leader of 10,000 units
		// would otherwise hold them all at once. It is rebuilt when the
		// unit is handed out.
		c.views[name].uni = nil
		c.dirty[name] = ownWrites
	}
	for name := range c.claims {
		if _, ok := c.views[name]; !ok {
			delete(c.claims, name)
		}
	}
	for name := range c.last {
		if _, ok := c.views[name]; !ok {
			delete(c.last, name)
		}
	}
}

// rebuild rebuilds one unit's view and its place in the stale set.
func (c *Controller) rebuild(st *model.State, name string) {
	u, ok := st.Units[name]
	if !ok {
		delete(c.views, name)
		delete(c.stale, name)
		return
	}
	uni, seen := Build(st, name)
	_, registered := st.Machines[u.Machine]
	h, n := hashCounted(uni)
	c.views[name] = &view{uni: uni, seen: seen, hash: h, machine: u.Machine, member: registered}
	delete(c.dirty, name)
	c.work.Rebuilt++
	c.work.HashedBytes += int64(n)
	c.markStale(st, name)
}

// markStale keeps the set of units that may need a run: stale, or in error.
func (c *Controller) markStale(st *model.State, name string) {
	u, v := st.Units[name], c.views[name]
	if u == nil || v == nil {
		delete(c.stale, name)
		return
	}
	if v.hash != u.Reconciled || u.Error != nil {
		c.stale[name] = true
	} else if c.stale[name] {
		delete(c.stale, name)
		// It may have held the lowest wave: whoever waits looks again.
		close(c.changed)
		c.changed = make(chan struct{})
	}
}

// watchers adds to set the units whose universe shows unit's settings in
// relation rel: the other side's members (its peers for a peer relation).
func (c *Controller) watchers(st *model.State, unit string, rel int, set map[string]bool) {
	u, r := st.Units[unit], st.Relations[rel]
	if u == nil || r == nil {
		return
	}
	remote, ok := r.Remote(u.Service)
	if !ok {
		return
	}
	for _, o := range st.UnitsOf(remote.Service) {
		if o.Name != unit && (r.Scope != model.Container || st.Sees(o, u, r)) {
			set[o.Name] = true
		}
	}
}

// WorkStats counts the controller's work: universes rebuilt and bytes
// hashed, for the benchmark of work per change.
type WorkStats struct {
	Rebuilt     int64
	HashedBytes int64
}

// Stats returns the work done so far.
func (c *Controller) Stats() WorkStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.work
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
	for {
		names, next, settled := c.pick(st, machine, max, now)
		// A dirty unit that turned out unchanged may have held the
		// lowest wave: look again without it.
		if len(names) > 0 || !settled {
			return c.hand(st, machine, names, now), next
		}
	}
}

// pick chooses up to max units of machine to run now. Units run in waves:
// none runs again while a stale unit with fewer runs since the last
// operator change waits (or is running). A burst of first runs then lands
// before anyone reconciles it, so a unit related to a hundred others runs
// a handful of times, not a hundred. settled says a dirty unit of the
// lowest wave turned out unchanged, so the wave must be looked at again.
func (c *Controller) pick(st *model.State, machine string, max int, now time.Time) (names []string, next time.Time, settled bool) {
	wave := -1
	lowest := func(w int) {
		if wave < 0 || w < wave {
			wave = w
		}
	}
	for name := range c.claims {
		if u := st.Units[name]; u != nil && now.Before(c.claims[name].until) && !c.lost(st, name) {
			lowest(u.Wave)
		}
	}
	var mine []string
	for name := range c.stale {
		u, v := st.Units[name], c.views[name]
		if u == nil || v == nil || c.lost(st, name) {
			continue
		}
		if cl, ok := c.claims[name]; ok && now.Before(cl.until) {
			continue
		}
		// A dirty view is judged by the state alone here; it is rebuilt
		// only if it is handed out.
		ok, retry := dispatchable(u, v, now)
		switch {
		case ok || c.dirty[name] == moved:
			lowest(u.Wave)
			if v.machine == machine {
				mine = append(mine, name)
			}
		case v.machine == machine && !retry.IsZero() && (next.IsZero() || retry.Before(next)):
			next = retry
		}
	}
	sort.Slice(mine, func(i, j int) bool { return model.UnitLess(mine[i], mine[j]) })
	for _, name := range mine {
		if max > 0 && len(names) >= max {
			break
		}
		if st.Units[name].Wave != wave {
			continue
		}
		if c.dirty[name] != clean {
			c.rebuild(st, name)
			if ok, _ := dispatchable(st.Units[name], c.views[name], now); !ok {
				// It changed back: it must not hold the wave any more.
				settled = true
				continue
			}
		}
		names = append(names, name)
	}
	return names, next, settled
}

// hand claims names for machine and returns their work.
func (c *Controller) hand(st *model.State, machine string, names []string, now time.Time) []Work {
	work := make([]Work, 0, len(names))
	for _, name := range names {
		v := c.views[name]
		uni := c.dress(st, st.Units[name], v)
		ch := st.Charms[uni.Charm]
		c.claims[name] = &claim{machine: machine, hash: v.hash, uni: &uni, seen: v.seen, at: now, until: now.Add(c.opts.Lease)}
		u := st.Units[name]
		work = append(work, Work{Unit: name, Hash: v.hash, Charm: uni.Charm, Legacy: ch != nil && ch.Legacy, Universe: &uni,
			Environment: st.Name, Principal: u.Principal, Status: &charmapi.Status{State: u.Status.State, Message: u.Status.Message}, Ports: u.Ports})
		// The claim holds the universe now; the view keeps only its hash
		// and is rebuilt if it is wanted again. At 10,000 units holding
		// every universe twice was most of the leader's memory.
		v.uni = nil
		if c.dirty[name] == clean {
			c.dirty[name] = ownWrites
		}
		c.runs[name]++
	}
	return work
}

// lost reports whether unit's machine is gone or its agent lost: its
// units cannot run, so they hold nobody's wave back.
func (c *Controller) lost(st *model.State, unit string) bool {
	v := c.views[unit]
	if v == nil {
		return true
	}
	m := st.Machines[v.machine]
	return m == nil || m.Lost
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
			if v == nil || v.uni == nil || v.hash != rep.Hash || v.machine != machine {
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
	c.hist.record(c.store, machine, reports, results, now)
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
			// The universe last reconciled names the keys that keep
			// changing when a unit diverges; only units that have run
			// often lately (a quarter of the way to the divergence
			// bound) are worth the memory - at 2,000-member universes
			// keeping every unit's was most of the heap.
			if r.Error == "" && c.runs[r.Unit] >= suspect {
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
		if c.dirty[unit] != clean {
			c.rebuild(st, unit)
		}
		v, ok := c.views[unit]
		if !ok {
			return fmt.Errorf("unit %s does not exist (units: %d in the environment)", unit, len(st.Units))
		}
		uni := c.dress(st, st.Units[unit], v)
		out = &uni
		return nil
	})
	return out, err
}

// dress completes a cached universe for a run: the attempt number and the
// legacy events since the unit's last successful reconcile.
func (c *Controller) dress(st *model.State, u *model.Unit, v *view) charmapi.Universe {
	uni := *v.uni
	uni.Attempt = 1
	if u.Error != nil && u.Error.Hash == v.hash {
		uni.Attempt = u.Error.Attempts + 1
	}
	uni.Events = legacyEvents(st, u.Name, u.Seen, v.seen)
	return uni
}
