package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/hookrun"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/keyring"
)

// Options tune Simulate; zero values take the defaults.
type Options struct {
	// Schedules is how many schedules to run (default 20). Schedule 0
	// runs every stale unit in lockstep rounds, schedule 1 one unit at a
	// time; the others pick random subsets, orders, batches and delays.
	Schedules int
	// From is the index of the first schedule, to replay one: the
	// schedule with a given index and seed is always the same.
	From int
	// Seed seeds the schedules.
	Seed uint64
	// Machines is how many machines to register (default 1, "local" at
	// 127.0.0.1, as `fixpoint up` does); with more, they are m0, m1, ...
	// at 10.0.0.1, 10.0.0.2, ... and units spread over them.
	Machines int
	// Parallel bounds the schedules run at once (default GOMAXPROCS).
	Parallel int
	// HookTimeout bounds one hook run (default hookrun.DefaultTimeout).
	HookTimeout time.Duration
	// ToolsBinary is what old-hook charms' hook tools run as: fixpoint-hook
	// or a fixpoint executable ("" means legacy.ToolsProgram's choice).
	ToolsBinary string
	// MaxReconciles stops a schedule after that many hook runs (default
	// enough for every unit to reach the engine's divergence bound).
	MaxReconciles int
	// Trace keeps every step of every schedule in the report.
	Trace bool
	// WorkDir holds unpacked charms and unit directories (default a
	// temporary directory, removed at the end).
	WorkDir string
	// NoUpdateStatus leaves out the update-status timer, which otherwise
	// fires once when a schedule has nothing left to run: the settled
	// units of old-hook and ops charms run update-status (ops re-emits
	// its deferred events), and the schedule goes on if that changed
	// anything.
	NoUpdateStatus bool
	// Actions run, in order, once the schedule reaches its fixed point;
	// the schedule runs to the fixed point again after each.
	Actions []Action
}

// Schedule styles.
const (
	StyleLockstep = "lockstep"
	StyleSerial   = "serial"
	StyleRandom   = "random"
)

// sim is one Simulate call: what every schedule shares.
type sim struct {
	opts    Options
	env     string
	deploy  []byte          // the deploy command, JSON
	hooks   map[string]Hook // by service
	machine []model.RegisterMachine
	work    string
	// cached holds each resource file's copy in work, by digest.
	cached map[string]string
}

// Simulate runs the environment under opts.Schedules schedules and
// reports whether they all reach the same fixed point. The error is for
// an environment that cannot be simulated at all (a charm that does not
// load or build, a service without a hook); everything a hook does wrong
// is in the report.
func (e *Env) Simulate(ctx context.Context, opts Options) (*Report, error) {
	if err := e.err(); err != nil {
		return nil, err
	}
	if len(e.services) == 0 {
		return nil, errors.New("the environment has no services")
	}
	if opts.Schedules <= 0 {
		opts.Schedules = 20
	}
	if opts.Machines <= 0 {
		opts.Machines = 1
	}
	if opts.Parallel <= 0 {
		opts.Parallel = runtime.GOMAXPROCS(0)
	}
	if opts.HookTimeout <= 0 {
		opts.HookTimeout = hookrun.DefaultTimeout
	}
	s := &sim{opts: opts, env: e.name, hooks: map[string]Hook{}, work: opts.WorkDir, cached: map[string]string{}}
	if s.work == "" {
		dir, err := os.MkdirTemp("", "fixpoint-charmtest-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		s.work = dir
	}
	deploy, units, err := s.prepare(e)
	if err != nil {
		return nil, err
	}
	s.deploy = deploy
	if s.opts.MaxReconciles <= 0 {
		s.opts.MaxReconciles = (model.DivergeBound+8)*units + 64
	}

	rep := &Report{Env: e.name, Seed: opts.Seed, Schedules: make([]*Schedule, opts.Schedules)}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, opts.Parallel)
	for i := range opts.Schedules {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			sc, err := s.run(ctx, opts.From+i)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			rep.Schedules[i] = sc
		}(i)
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.summarize()
	rep.checkExpect(e.expectations())
	return rep, nil
}

// prepare resolves every service's hook (packing charms that need it),
// registers the machines and builds the deploy command.
func (s *sim) prepare(e *Env) ([]byte, int, error) {
	env := model.Environment{APIVersion: model.APIVersion, Name: e.name, Services: map[string]model.ServiceSpec{}, Relations: map[string][]string{}}
	charms := map[string]*model.Charm{}
	packedHooks := map[string]Hook{}
	packedHash := map[string]string{}
	packedLegacy := map[string]bool{}
	machines := map[string]bool{}
	units := 0
	for _, name := range e.Services() {
		svc := e.services[name]
		if svc.meta == nil {
			return nil, 0, fmt.Errorf("service %s: no charm metadata", name)
		}
		hash := ""
		legacy := false
		if h := e.hookFor(svc); h != nil {
			s.hooks[name] = h
			if svc.dir != "" {
				hash = "charmtest-" + svc.meta.Name + "-" + shortDigest([]byte(svc.dir))
			} else {
				hash = "charmtest-" + svc.meta.Name + "-" + name
			}
		} else {
			if svc.dir == "" {
				return nil, 0, fmt.Errorf("service %s (charm %s) has no hook: register one with env.Hook(%q, charmtest.Func(reconcile))", name, svc.meta.Name, name)
			}
			h, ok := packedHooks[svc.dir]
			if !ok {
				// Deploy refused a directory without a CharmReader.
				hook, hash, old, err := e.charms.Open(svc.dir, filepath.Join(s.work, "charms"), s.opts.ToolsBinary)
				if err != nil {
					return nil, 0, fmt.Errorf("service %s: %w", name, err)
				}
				h, packedHooks[svc.dir], packedHash[svc.dir], packedLegacy[svc.dir] = hook, hook, hash, old
			}
			s.hooks[name] = h
			hash = packedHash[svc.dir]
			legacy = packedLegacy[svc.dir]
		}
		if _, ok := charms[hash]; !ok {
			charms[hash] = &model.Charm{Hash: hash, Source: svc.dir, Meta: *svc.meta, Legacy: legacy}
		}
		n := svc.units
		env.Services[name] = model.ServiceSpec{Charm: svc.dir, CharmHash: hash, Units: &n, Config: svc.config, Placement: svc.placement,
			Resources: svc.resources, ResourceDigests: svc.digests}
		if !svc.meta.Subordinate {
			units += n
		}
		for _, m := range svc.placement {
			machines[m] = true
		}
	}
	for name, ends := range e.relations {
		env.Relations[name] = ends
	}
	if _, err := model.Resolve(&env, charms); err != nil {
		return nil, 0, err
	}
	if err := s.fetchResources(e); err != nil {
		return nil, 0, err
	}
	if s.opts.Machines == 1 {
		s.machine = append(s.machine, model.RegisterMachine{Name: "local", Address: "127.0.0.1", Number: true})
		delete(machines, "local")
	} else {
		for i := range s.opts.Machines {
			name := fmt.Sprintf("m%d", i)
			s.machine = append(s.machine, model.RegisterMachine{Name: name, Address: fmt.Sprintf("10.0.0.%d", i+1), Number: true})
			delete(machines, name)
		}
	}
	for i, m := range slices.Sorted(maps.Keys(machines)) {
		s.machine = append(s.machine, model.RegisterMachine{Name: m, Address: fmt.Sprintf("10.0.1.%d", i+1), Number: true})
	}
	deploy, err := json.Marshal(&model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}})
	if err != nil {
		return nil, 0, err
	}
	return deploy, units, nil
}

// runner runs one schedule: which one, how it picks, and the three
// things it keeps as it goes.
type runner struct {
	s     *sim
	idx   int
	style string
	rng   *rand.Rand
	dir   string
	fsm   replica
	hooks hookRuns
	trail trail
}

// replica is the schedule's copy of the control plane's state and its
// clock: the state at index, seen skew past the entries' time.
type replica struct {
	st    *model.State
	index uint64
	skew  time.Duration
}

// hookRuns is what the schedule handed out and what landed: the runs in
// flight, how many ran, which units ran once, each unit's last universe
// and the time of its last result, and whether the timer fired.
type hookRuns struct {
	flight []*flight
	runs   int
	ran    map[string]bool
	last   map[string]*charmapi.Universe
	// lastRun is when each unit's last result landed, and ticked whether
	// the update-status timer fired (replica.skew is the jump it made).
	lastRun map[string]time.Time
	ticked  bool
}

// trail is what the schedule records for its report.
type trail struct {
	steps []Step
	fps   []string // fps[k] is the settings digest after step k (0: after deploy)
	flat  map[string]string
	calls []callRecord
	acts  []*model.Action
}

// flight is a hook run whose result is not applied yet.
type flight struct {
	unit string
	uni  *charmapi.Universe
	res  *model.Result
}

func styleOf(idx int) string {
	switch idx {
	case 0:
		return StyleLockstep
	case 1:
		return StyleSerial
	}
	return StyleRandom
}

func (s *sim) run(ctx context.Context, idx int) (*Schedule, error) {
	r := &runner{
		s: s, idx: idx, style: styleOf(idx),
		rng:   rand.New(rand.NewPCG(s.opts.Seed, uint64(idx))),
		fsm:   replica{st: model.NewState()},
		dir:   filepath.Join(s.work, fmt.Sprintf("schedule-%d", idx)),
		hooks: hookRuns{last: map[string]*charmapi.Universe{}, ran: map[string]bool{}, lastRun: map[string]time.Time{}},
	}
	keys, err := keyring.NewMemoryKeyring()
	if err != nil {
		return nil, err
	}
	r.fsm.st.SetSealer(keys)
	defer os.RemoveAll(r.dir)
	for i := range s.machine {
		m := s.machine[i]
		if _, err := r.fsm.apply(&model.Command{Op: model.OpMachine, Machine: &m}); err != nil {
			return nil, fmt.Errorf("register machine %s: %w", m.Name, err)
		}
	}
	var deploy model.Command
	if err := json.Unmarshal(s.deploy, &deploy); err != nil {
		return nil, err
	}
	r.fsm.index++
	if _, err := r.fsm.st.Apply(r.fsm.index, &deploy); err != nil {
		return nil, fmt.Errorf("deploy: %w", err)
	}
	r.trail.flat = flatState(r.fsm.st)
	r.trail.fps = []string{digestFlat(r.trail.flat)}
	cut, err := r.settle(ctx)
	if err != nil {
		return nil, err
	}
	for _, act := range s.opts.Actions {
		if cut {
			break
		}
		if err := r.action(ctx, act); err != nil {
			return nil, err
		}
		if cut, err = r.settle(ctx); err != nil {
			return nil, err
		}
	}
	if !cut {
		if err := r.checkRuns(ctx); err != nil {
			return nil, err
		}
	}
	return r.finish(cut), nil
}

// settle runs the schedule until no unit is stale, or until it is cut at
// MaxReconciles (true).
func (r *runner) settle(ctx context.Context) (bool, error) {
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		stale := r.stale()
		if len(stale) == 0 && len(r.hooks.flight) == 0 {
			ticked, err := r.tick(ctx)
			if err != nil {
				return false, err
			}
			if ticked {
				continue
			}
			return false, nil
		}
		if r.hooks.runs >= r.s.opts.MaxReconciles {
			return true, nil
		}
		if err := r.round(ctx, stale); err != nil {
			return false, err
		}
	}
}

// apply applies a command as the Raft FSM would: decoded from JSON, at
// the next index.
func (f *replica) apply(c *model.Command) (*model.Response, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var dc model.Command
	if err := json.Unmarshal(data, &dc); err != nil {
		return nil, err
	}
	f.index++
	return f.st.Apply(f.index, &dc)
}

// stale lists, in unit order, the units the control plane would hand
// out now (Runnable), leaving out those in flight.
func (r *runner) stale() []string {
	return Runnable(r.fsm.st, r.inFlight, r.fsm.now())
}

// now is the schedule's clock: it moves a nanosecond per entry, so that a
// failed hook's retry (seconds away) never comes due within a schedule and
// the report shows the error instead of retries until MaxReconciles.
func (f *replica) now() time.Time { return time.Unix(0, int64(f.index)).Add(f.skew) }

// tick fires the update-status timer, once per schedule, when it has
// nothing left to run: the clock jumps an interval, and the units whose
// timer fired (TimerDue) run update-status and report in one batch. It
// says whether any ran.
func (r *runner) tick(ctx context.Context) (bool, error) {
	if r.hooks.ticked || r.s.opts.NoUpdateStatus {
		return false, nil
	}
	r.hooks.ticked = true
	r.fsm.skew += schedule.DefaultUpdateStatus
	due := TimerDue(r.fsm.st, func(unit string) time.Time { return r.hooks.lastRun[unit] }, schedule.DefaultUpdateStatus, r.fsm.now())
	for _, unit := range due {
		if err := r.claim(ctx, unit, true); err != nil {
			return false, err
		}
	}
	if len(r.hooks.flight) == 0 {
		return false, nil
	}
	batch := r.hooks.flight
	r.hooks.flight = nil
	return true, r.deliver(batch)
}

func (r *runner) inFlight(unit string) bool {
	for _, f := range r.hooks.flight {
		if f.unit == unit {
			return true
		}
	}
	return false
}

// round claims some stale units, runs their hooks on the universes they
// see now, and applies some of the results in batches.
func (r *runner) round(ctx context.Context, stale []string) error {
	var pick []string
	switch r.style {
	case StyleLockstep:
		pick = stale
	case StyleSerial:
		if len(r.hooks.flight) == 0 && len(stale) > 0 {
			pick = []string{stale[r.rng.IntN(len(stale))]}
		}
	default:
		if len(stale) > 0 {
			k := 1 + r.rng.IntN(len(stale))
			for _, i := range r.rng.Perm(len(stale))[:k] {
				pick = append(pick, stale[i])
			}
		}
	}
	for _, unit := range pick {
		if err := r.claim(ctx, unit, false); err != nil {
			return err
		}
	}
	n := len(r.hooks.flight)
	if n == 0 {
		return nil
	}
	if r.style != StyleRandom {
		batch := r.hooks.flight
		r.hooks.flight = nil
		return r.deliver(batch)
	}
	r.rng.Shuffle(n, func(i, j int) { r.hooks.flight[i], r.hooks.flight[j] = r.hooks.flight[j], r.hooks.flight[i] })
	d := n
	if n > 1 && r.rng.IntN(4) == 0 {
		d = 1 + r.rng.IntN(n-1) // the rest are delayed to a later round
	}
	out := slices.Clone(r.hooks.flight[:d])
	r.hooks.flight = slices.Clone(r.hooks.flight[d:])
	for len(out) > 0 {
		b := 1 + r.rng.IntN(len(out))
		if err := r.deliver(out[:b]); err != nil {
			return err
		}
		out = out[b:]
	}
	return nil
}

// deliver applies results as one command, the way an agent's report of
// several finished runs becomes one Raft entry.
func (r *runner) deliver(batch []*flight) error {
	results := make([]model.Result, len(batch))
	units := make([]string, len(batch))
	for i, f := range batch {
		results[i] = *f.res
		units[i] = f.unit
	}
	// As the control plane's leader seals them before proposing.
	if err := model.SealResults(r.fsm.st.Sealer(), results); err != nil {
		return fmt.Errorf("seal the secrets of %s: %w", strings.Join(units, ", "), err)
	}
	if _, err := r.fsm.apply(&model.Command{Op: model.OpResults, Time: r.fsm.now().UnixNano(), Results: results}); err != nil {
		return fmt.Errorf("apply results of %s: %w", strings.Join(units, ", "), err)
	}
	for _, f := range batch {
		if f.res.Error == "" && r.fsm.st.Units[f.unit] != nil {
			r.hooks.last[f.unit] = f.uni
		}
		r.hooks.lastRun[f.unit] = r.fsm.now()
	}
	r.trail.step(units, r.fsm.st)
	return nil
}

// step records st after a step that ran units: what changed, and its
// settings digest.
func (t *trail) step(units []string, st *model.State) {
	flat := flatState(st)
	t.steps = append(t.steps, Step{N: len(t.steps) + 1, Units: units, Changes: diffFlat(t.flat, flat)})
	t.flat = flat
	t.fps = append(t.fps, digestFlat(flat))
}

// finish sums up a schedule.
func (r *runner) finish(cut bool) *Schedule {
	sc := &Schedule{Index: r.idx, Style: r.style, Reconciles: r.hooks.runs, Steps: len(r.trail.steps), Cut: cut,
		Final: r.trail.flat, Digest: r.trail.fps[len(r.trail.fps)-1], Errors: map[string]string{}, state: r.fsm.st, calls: r.trail.calls, Actions: r.trail.acts}
	for _, name := range r.fsm.st.SortedUnits() {
		if u := r.fsm.st.Units[name]; u.Error != nil {
			sc.Errors[name] = u.Error.Message
		}
	}
	sc.Converged = !cut && len(sc.Errors) == 0
	if r.s.opts.Trace {
		sc.Trace = r.trail.steps
	}
	if !sc.Converged {
		sc.Cycle = findCycle(r.trail.steps, r.trail.fps)
		if sc.Cycle == nil {
			sc.Churn = recentChurn(r.trail.steps, 4*max(len(r.fsm.st.Units), 1))
		}
	}
	return sc
}

func shortDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}
