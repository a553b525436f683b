// Package agent runs on every machine: it long-polls the control plane for
// the stale units placed there, runs their hooks with bounded concurrency
// and posts the results. It keeps no state that matters: the control plane
// holds what each unit last reconciled, so a restarted agent simply gets
// the same work again.
package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/hookrun"
	"github.com/fixpoint/fixpoint/engine/legacy"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/backoff"
	"github.com/fixpoint/fixpoint/model/fault"
)

// Client is the agent's view of the control plane.
type Client interface {
	Register(ctx context.Context, machine, address string) error
	Claim(ctx context.Context, machine string, max int, wait time.Duration) ([]wire.Work, error)
	Report(ctx context.Context, machine string, reports []wire.Report) error
	// Heartbeat says the agent is alive even while every slot is busy; it
	// returns the running units no longer placed on the machine. Units
	// are named by their unit keys (wire.UnitKey) here and in Released.
	Heartbeat(ctx context.Context, machine string, running []string) (gone []string, err error)
	// Released returns those of kept, the units whose storage the agent
	// keeps, that are no longer placed on the machine, read from the
	// latest committed state.
	Released(ctx context.Context, machine string, kept []string) (released []string, err error)
	// EnvsGone returns those of envs, the environments whose directories
	// the agent keeps, that the cluster no longer holds, read from the
	// latest committed state.
	EnvsGone(ctx context.Context, machine string, envs []string) (gone []string, err error)
	// FetchCharm makes the charm with hash available as an unpacked
	// directory under dir, verifying its content hash.
	FetchCharm(ctx context.Context, hash, dir string) error
	// FetchResource downloads the resource file of digest to path,
	// verifying its digest.
	FetchResource(ctx context.Context, digest, path string) error
	// StartAction says the agent takes an operation; an error says not
	// to run it. FinishAction reports what it came to.
	StartAction(ctx context.Context, machine, env string, id int) error
	FinishAction(ctx context.Context, machine string, rep *wire.ActionReport) error
}

// Config configures an Agent.
type Config struct {
	Machine string
	// Address is this machine's address: its units' private-address.
	Address string
	DataDir string
	// Concurrency bounds hooks running at once; default
	// DefaultConcurrency().
	Concurrency int
	HookTimeout time.Duration
	MaxOutput   int
	// HookShell is what runs old charms' POSIX sh hooks
	// (legacy.HookShellBuiltin, the default, or HookShellSystem).
	HookShell string
	// Poll is how long one long-poll waits for work.
	Poll time.Duration
	// Heartbeat is how often the agent says it is alive.
	Heartbeat time.Duration
	// Observe, when set, is told about every finished run.
	Observe func(w wire.Work, r wire.Report)
	// Log is the agent's log; an hclog.InterceptLogger's lines also go
	// to the debug log (logship.go).
	Log hclog.Logger
	// Ship bounds the shipping of log lines to the debug log.
	Ship ShipperOptions
}

// Agent runs hooks for one machine.
type Agent struct {
	cfg    Config
	client Client

	mu sync.Mutex
	// running and stop are keyed by unit key (wire.UnitKey): two
	// environments may both run db/0 here.
	running map[string]bool
	// stop cancels a running unit's run: its hook is ended when the unit
	// is removed from the machine.
	stop map[string]context.CancelFunc
	// leaving counts the heartbeats that still ask whether an
	// environment whose unit ran its dying hooks is gone (envs.go).
	leaving map[string]int
	charms  map[string]*sync.Mutex
	res     resourceCache
	// acting holds the operations this agent is running (actions.go).
	acting map[int]bool
	// unanswered counts the results being posted whose post the control
	// plane has not answered yet.
	unanswered atomic.Int64
	// ship carries log lines to the debug log; nil when the client
	// takes none.
	ship *Shipper
}

// DefaultConcurrency sizes the hook slots to the machine: two per CPU the
// process may use (GOMAXPROCS follows the container's CPU limit). A hook
// spends part of its time waiting (an old hook for every hook tool's
// process start and answer, any hook for its own I/O), so one slot per CPU
// would leave CPUs idle; more than two mostly lengthens every hook.
func DefaultConcurrency() int {
	return 2 * runtime.GOMAXPROCS(0)
}

// New returns an agent; Run starts it.
func New(client Client, cfg Config) *Agent {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency()
	}
	if cfg.HookTimeout <= 0 {
		cfg.HookTimeout = hookrun.DefaultTimeout
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 30 * time.Second
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = 5 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = hclog.NewNullLogger()
	}
	return &Agent{cfg: cfg, client: client, running: map[string]bool{}, stop: map[string]context.CancelFunc{}, charms: map[string]*sync.Mutex{},
		ship: newShipper(client, cfg)}
}

// Run registers the machine and works until ctx ends, or until the
// control plane refuses the agent for good (say, a credential that does
// not cover the machine): then it returns that error.
func (a *Agent) Run(ctx context.Context) error {
	log := a.cfg.Log
	// Runs a previous agent on this data dir left behind (it was killed
	// mid-hook) end before anything runs again, units removed meanwhile
	// included.
	if err := a.endLeftovers(); err != nil {
		log.Warn("could not end the hook runs a previous agent left", "error", err)
	}
	log.Info("hooks contained", "by", hookrun.Containment())
	if err := retry(ctx, log, "register machine "+a.cfg.Machine, func() error {
		return a.client.Register(ctx, a.cfg.Machine, a.cfg.Address)
	}); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("register machine %s: %w", a.cfg.Machine, err)
	}
	log.Info("agent registered", "machine", a.cfg.Machine, "address", a.cfg.Address)
	// A refusal for good ends the posting and the heartbeats too.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	reports := make(chan wire.Report, 1024)
	var wg sync.WaitGroup
	a.startShipping(ctx, &wg)
	wg.Add(2)
	go func() {
		defer wg.Done()
		a.post(ctx, reports)
	}()
	go func() {
		defer wg.Done()
		a.heartbeat(ctx)
	}()
	slots := make(chan struct{}, a.cfg.Concurrency)
	failures := 0
	var fatal error
	for ctx.Err() == nil {
		a.mu.Lock()
		free := a.cfg.Concurrency - len(a.running)
		a.mu.Unlock()
		if free <= 0 {
			// Wait for a slot before claiming more.
			select {
			case slots <- struct{}{}:
				<-slots
			case <-ctx.Done():
			}
			continue
		}
		work, err := a.client.Claim(ctx, a.cfg.Machine, free, a.cfg.Poll)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			if errors.Is(err, api.ErrPollTimeout) {
				// Not the control plane failing: it answered, and the
				// answer is held on the way. Ask again at once.
				log.Warn("work poll ended by timeout: the control plane's answer, due by the poll's wait, did not come; its work for this machine waits behind whatever holds it",
					"error", err, "free_slots", free, "results_unanswered", a.unanswered.Load())
				continue
			}
			if errors.Is(err, api.ErrNotRegistered) || errors.Is(err, api.ErrUnauthorized) {
				// The control plane lost the machine (a restore, a
				// removal, `machine forget`) or the operator reset its
				// credential: register it again (with the join token if
				// the credential is gone), then claim at once.
				log.Warn("machine not registered; registering again", "error", err)
				if err = a.client.Register(ctx, a.cfg.Machine, a.cfg.Address); err == nil {
					failures = 0
					continue
				}
			}
			if permanent(err) {
				fatal = fmt.Errorf("claim work for machine %s: %w", a.cfg.Machine, err)
				log.Error("the control plane refuses this agent; stopping", "error", err)
				break
			}
			failures++
			d := retryDelay(failures)
			log.Warn("claim work failed; retrying", "error", err, "in", d)
			backoff.Sleep(ctx, d)
			continue
		}
		failures = 0
		for _, w := range work {
			if w.Action != nil {
				// Not a hook slot's: it waits for the unit's run lock.
				wg.Add(1)
				go func(w wire.Work) {
					defer wg.Done()
					a.runAction(ctx, w)
				}(w)
				continue
			}
			key := w.Key()
			a.mu.Lock()
			if a.running[key] {
				a.mu.Unlock()
				continue
			}
			a.running[key] = true
			a.mu.Unlock()
			slots <- struct{}{}
			wg.Add(1)
			go func(w wire.Work) {
				defer wg.Done()
				runCtx, stop := context.WithCancel(ctx)
				a.mu.Lock()
				a.stop[w.Key()] = stop
				a.mu.Unlock()
				rep := a.runOne(runCtx, w)
				removed := runCtx.Err() != nil && ctx.Err() == nil
				stop()
				<-slots
				a.mu.Lock()
				delete(a.running, w.Key())
				delete(a.stop, w.Key())
				a.mu.Unlock()
				// A removed unit's run has nobody to report to.
				if ctx.Err() == nil && !removed {
					reports <- rep
				}
			}(w)
		}
	}
	stop()
	wg.Wait()
	return fatal
}

// post sends finished runs, batching whatever finished meanwhile into one
// request: fewer round trips and fewer Raft entries.
func (a *Agent) post(ctx context.Context, reports <-chan wire.Report) {
	for {
		var batch []wire.Report
		select {
		case <-ctx.Done():
			return
		case r := <-reports:
			batch = append(batch, r)
		}
	drain:
		for {
			select {
			case r := <-reports:
				batch = append(batch, r)
			default:
				break drain
			}
		}
		a.unanswered.Add(int64(len(batch)))
		for _, part := range splitReports(batch, maxReportBytes) {
			_ = retry(ctx, a.cfg.Log, fmt.Sprintf("report %d results", len(part)), func() error {
				start := time.Now()
				err := a.client.Report(ctx, a.cfg.Machine, part)
				if err == nil {
					a.slow("results post", len(part), time.Since(start))
				}
				return err
			})
			a.unanswered.Add(-int64(len(part)))
		}
	}
}

// slow warns when the control plane took longer than half a work poll's
// wait to answer a request it answers at once: the answer was held on
// the way, and the hand-out of the work behind it with it.
func (a *Agent) slow(what string, units int, took time.Duration) {
	if took > a.cfg.Poll/2 {
		a.cfg.Log.Warn("the control plane's answer to a "+what+" was held on the way; it answers at once, and the work waiting behind it is held as long",
			"units", units, "took", took.Round(time.Millisecond))
	}
}

// maxReportBytes keeps one results request well under the control
// plane's body limit (model.MaxCommandBytes), whatever the batch.
const maxReportBytes = 1 << 20

// splitReports cuts a batch into requests of about max encoded bytes
// each; a single larger report goes alone (the control plane then says
// why it is too large).
func splitReports(batch []wire.Report, max int) [][]wire.Report {
	var parts [][]wire.Report
	start, size := 0, 0
	for i, r := range batch {
		// Output travels base64-encoded: 4 bytes per 3.
		n := len(r.Output)*4/3 + len(r.Stderr) + len(r.Error) + len(r.Unit) + len(r.Hash) + 128
		if i > start && size+n > max {
			parts = append(parts, batch[start:i])
			start, size = i, 0
		}
		size += n
	}
	return append(parts, batch[start:])
}

func (a *Agent) heartbeat(ctx context.Context) {
	t := time.NewTicker(a.cfg.Heartbeat)
	defer t.Stop()
	// The agent has registered: the storage of units removed while it
	// was away goes first, then that of units removed without a last
	// run here, every sweepHeartbeats.
	a.sweepStorage(ctx)
	a.sweepEnvs(ctx, true)
	beats := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if beats++; beats%sweepHeartbeats == 0 {
				a.sweepStorage(ctx)
				a.sweepEnvs(ctx, true)
			} else {
				a.sweepEnvs(ctx, false)
			}
			a.mu.Lock()
			running := make([]string, 0, len(a.running))
			for u := range a.running {
				running = append(running, u)
			}
			a.mu.Unlock()
			start := time.Now()
			gone, err := a.client.Heartbeat(ctx, a.cfg.Machine, running)
			if err == nil {
				a.slow("heartbeat", len(running), time.Since(start))
			}
			if err != nil && ctx.Err() == nil {
				a.cfg.Log.Warn("heartbeat failed", "error", err)
			}
			a.mu.Lock()
			for _, u := range gone {
				if stop := a.stop[u]; stop != nil {
					a.cfg.Log.Info("unit is no longer on this machine; ending its hook", "unit", u)
					stop()
				}
			}
			a.mu.Unlock()
		}
	}
}

// runOne runs a unit's hook (or the old-hook adapter) on its universe.
func (a *Agent) runOne(ctx context.Context, w wire.Work) (rep wire.Report) {
	rep = wire.Report{Unit: w.Unit, Hash: w.Hash, Env: w.Env}
	start := time.Now()
	defer func() {
		rep.Duration = time.Since(start)
		a.cfg.Log.Debug("reconciled", "unit", w.Unit, "env", w.Env, "hash", w.Hash, "took", rep.Duration, "error", rep.Error)
		if a.cfg.Observe != nil {
			a.cfg.Observe(w, rep)
		}
		if w.Universe != nil && w.Universe.Life == string(model.Dying) && rep.Error == "" {
			a.dying(w.Env)
		}
	}()
	charmDir, err := a.charm(ctx, w.Charm)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	unitDir, err := a.unitDir(w.Env, w.Unit)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	if err := os.MkdirAll(unitDir, 0o755); err != nil {
		rep.Error = fmt.Sprintf("unit directory: %v", err)
		return rep
	}
	// One run per unit, across agent restarts: the lock also ends what a
	// killed agent's run of this unit left running.
	lock, err := a.lockUnit(ctx, w)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	defer lock.Unlock()
	resources, err := a.unitResources(ctx, w, charmDir, unitDir)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	if err := a.attachStorage(&w); err != nil {
		rep.Error = err.Error()
		return rep
	}
	defer func() { a.releaseStorage(w, rep) }()
	env := a.hookEnv(w, charmDir)
	model, modelUUID := modelOf(w)
	if w.Legacy {
		res, st, err := legacy.Run(ctx, legacy.Options{CharmDir: charmDir, UnitDir: unitDir, Timeout: a.cfg.HookTimeout, MaxOutput: a.cfg.MaxOutput, Env: env, Log: a.unitLog(w), HookShell: a.cfg.HookShell,
			Model: model, ModelUUID: modelUUID, PrincipalUnit: w.Principal, Status: w.Status, Ports: w.Ports, Track: lock, Resources: resources}, w.Universe)
		// bench/oldhooks sums these.
		a.cfg.Log.Debug("old hooks ran", "unit", w.Unit, "hooks", st.HooksRun, "tool_calls", st.ToolCalls)
		if err != nil {
			rep.Error = err.Error()
			if herr := (*legacy.HookError)(nil); errors.As(err, &herr) {
				rep.Stderr = herr.Stderr
			}
			return rep
		}
		rep.Output, _ = json.Marshal(res)
		return rep
	}
	// The universe as the server sent it: encoding the decoded one
	// again cost the agent as much as decoding it.
	input, err := universeInput(w)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	spec := hookrun.Spec{
		Path:      filepath.Join(charmDir, "hooks", "reconcile"),
		Dir:       unitDir,
		Input:     input,
		InputEnv:  "FIXPOINT_UNIVERSE",
		Env:       env,
		Timeout:   a.cfg.HookTimeout,
		MaxOutput: a.cfg.MaxOutput,
		Track:     lock,
	}
	if lines := a.hookOutput(w); lines != nil {
		spec.Stderr = lines
		defer lines.Close()
	}
	out, err := hookrun.Run(ctx, spec)
	if err != nil {
		rep.Error = err.Error()
		if herr := (*hookrun.Error)(nil); errors.As(err, &herr) {
			rep.Stderr = herr.Stderr
		}
		return rep
	}
	rep.Stderr = out.Stderr
	rep.Output, rep.Error = output(w, out.Stdout)
	return rep
}

// output makes a hook's stdout the report's Output. It must be one JSON
// value to travel inside the report; stdout that is not is reported as the
// error the engine's result decoder gives it, so the hook's author reads
// the same message either way.
func output(w wire.Work, stdout []byte) (json.RawMessage, string) {
	stdout = bytes.TrimSpace(stdout)
	if len(stdout) == 0 || json.Valid(stdout) {
		return stdout, ""
	}
	if _, err := engine.DecodeResult(w.Universe, stdout); err != nil {
		return nil, err.Error()
	}
	return nil, "bad result: stdout is not JSON"
}

// charm returns the unpacked charm directory, fetching it once.
func (a *Agent) charm(ctx context.Context, hash string) (string, error) {
	a.mu.Lock()
	m, ok := a.charms[hash]
	if !ok {
		m = &sync.Mutex{}
		a.charms[hash] = m
	}
	a.mu.Unlock()
	m.Lock()
	defer m.Unlock()
	dir := filepath.Join(a.cfg.DataDir, "charms", hash)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir, nil
	}
	_ = os.RemoveAll(dir)
	if err := a.client.FetchCharm(ctx, hash, dir); err != nil {
		return "", fmt.Errorf("fetch charm %s: %w", model.ShortHash(hash), err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644); err != nil {
		return "", fmt.Errorf("fetch charm %s: %w", model.ShortHash(hash), err)
	}
	return dir, nil
}

// retry calls fn until it succeeds, ctx ends or the control plane answers
// with an error that retrying can not change, backing off with jitter.
func retry(ctx context.Context, log hclog.Logger, what string, fn func() error) error {
	for i := 1; ; i++ {
		err := fn()
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case permanent(err):
			log.Error(what+" refused; not retrying", "error", err)
			return err
		}
		d := retryDelay(i)
		log.Warn(what+" failed; retrying", "error", err, "in", d)
		backoff.Sleep(ctx, d)
	}
}

// permanent reports whether err is an answer of the control plane that
// the same request will get again (a refusal, a credential that does not
// cover the machine), as opposed to a node that is down, leaderless or
// busy. An unknown token is not permanent: a follower may not yet have
// applied the credential the agent just registered.
func permanent(err error) bool {
	var e *api.Error
	return errors.As(err, &e) && !e.Kind.Retryable() && e.Kind != fault.KindUnauthorized
}

// retryDelay spaces the agent's retries of the control plane: doubling
// from Min to Max, each jittered down by up to half, so that agents that
// lost the control plane together do not come back together.
var retryDelay = backoff.Policy{Min: 100 * time.Millisecond, Max: 6400 * time.Millisecond, Jitter: 0.5}.Delay
