// Package fleet runs one engine controller per environment of the
// control plane (docs/environments.md, part A): it follows the cluster,
// starts a controller for each new environment and stops the controller
// of one removed. The controllers share the agents' contacts, so that
// machine liveness, the cluster's, is judged once; each keeps its own
// environment's views, claims, secret schedule and timeline, so that a
// change in one environment rebuilds no universe of another. They share
// the machines' wake-up signals too, so that an agent's one poll of
// every environment sleeps once, woken by a change in any.
package fleet

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/liveness"
	"github.com/fixpoint/fixpoint/engine/waiters"
	"github.com/fixpoint/fixpoint/model"
)

// Cluster is what a fleet needs of the replicated state: every
// environment at once, one environment's view as an engine.Store, and
// the log's progress. cmd/fixpoint adapts raftstore.Store to it.
type Cluster interface {
	ViewCluster(fn func(c *model.Cluster) error) error
	// Env is the named environment's view ("" the default one).
	Env(name string) engine.Store
	WaitIndex(ctx context.Context, after uint64) (index uint64, reset bool, err error)
	Index() uint64
}

// member is one environment's controller and what stops it.
type member struct {
	name string
	uuid string
	ctl  *engine.Controller
	// stop ends the controller's loops; done is closed once they all
	// returned. Both are nil until the fleet starts it.
	stop context.CancelFunc
	done <-chan struct{}
}

// Fleet owns one controller per environment, keyed by name ("" for the
// default environment, whose controller exists from New on).
type Fleet struct {
	cluster  Cluster
	opts     engine.Options
	contacts *liveness.Contacts
	// machines are the machines' wake-up signals, shared by every
	// controller, on which a poll of several environments sleeps.
	machines *waiters.Machines

	mu      sync.Mutex
	members map[string]*member
	// turn rotates the order in which a poll serves the environments,
	// so that none starves another (work.go).
	turn int
	// ctx is Start's, once it runs: controllers of environments added
	// later run under it.
	ctx context.Context
}

// New returns a fleet over cluster whose controllers take opts; it holds
// the default environment's controller at once (Default). Call Start to
// follow the cluster.
func New(cluster Cluster, opts engine.Options) *Fleet {
	if opts.Log == nil {
		opts.Log = hclog.NewNullLogger()
	}
	f := &Fleet{cluster: cluster, opts: opts, contacts: liveness.New(), machines: waiters.NewMachines(), members: map[string]*member{}}
	f.members[""] = f.newMember("", "")
	return f
}

// newMember builds the controller of environment name.
func (f *Fleet) newMember(name, uuid string) *member {
	opts := f.opts
	opts.Contacts = f.contacts
	opts.Machines = f.machines
	return &member{name: name, uuid: uuid, ctl: engine.NewController(f.cluster.Env(name), opts)}
}

// Default is the default environment's controller.
func (f *Fleet) Default() *engine.Controller { return f.Controller("") }

// Controller is environment name's controller, nil when the fleet runs
// none for it (no such environment, or not seen yet).
func (f *Fleet) Controller(name string) *engine.Controller {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m := f.members[name]; m != nil {
		return m.ctl
	}
	return nil
}

// Envs lists the environments the fleet runs a controller for, the
// default one ("") first, the others by name.
func (f *Fleet) Envs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	names := make([]string, 0, len(f.members))
	for name := range f.members {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Stats returns each environment's controller's work counts, by
// environment name: what the benchmark and the tests read to show that a
// change in one environment costs the others nothing.
func (f *Fleet) Stats() map[string]engine.WorkStats {
	f.mu.Lock()
	ms := make([]*member, 0, len(f.members))
	for _, m := range f.members {
		ms = append(ms, m)
	}
	f.mu.Unlock()
	out := make(map[string]engine.WorkStats, len(ms))
	for _, m := range ms {
		out[m.name] = m.ctl.Stats()
	}
	return out
}

// Start runs the fleet until ctx ends: the default controller's loops,
// the cluster's liveness watch (once, on the default controller, whose
// State holds the cluster's machines), and a loop that follows the
// cluster, starting and stopping the other environments' controllers.
// The channel is closed once every controller's loops have returned.
func (f *Fleet) Start(ctx context.Context) <-chan struct{} {
	isLeader := f.opts.IsLeader
	if isLeader == nil {
		isLeader = func() bool { return true }
	}
	f.mu.Lock()
	f.ctx = ctx
	def := f.members[""]
	f.mu.Unlock()
	f.run(ctx, def)
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		def.ctl.WatchAgents(ctx, isLeader)
	}()
	following := make(chan struct{})
	go func() {
		defer close(following)
		if err := f.follow(ctx); err != nil {
			f.opts.Log.Error("fleet stopped following the cluster", "error", err)
		}
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-watching
		<-following
		f.mu.Lock()
		ms := make([]*member, 0, len(f.members))
		for _, m := range f.members {
			ms = append(ms, m)
		}
		f.mu.Unlock()
		for _, m := range ms {
			if m.done != nil {
				<-m.done
			}
		}
	}()
	return done
}

// run starts m's own loops under a context of ctx's: following its
// environment, its timeline and its secrets' schedule. Liveness is the
// fleet's (Start).
func (f *Fleet) run(ctx context.Context, m *member) {
	isLeader := f.opts.IsLeader
	if isLeader == nil {
		isLeader = func() bool { return true }
	}
	mctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	m.stop, m.done = stop, done
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		err := m.ctl.Run(mctx)
		if err == nil || mctx.Err() != nil {
			return
		}
		// A controller whose environment was just removed fails to
		// read it before the fleet stops it: that is no failure.
		if m.name != "" && f.gone(m) {
			return
		}
		f.opts.Log.Error("controller stopped", "env", m.name, "error", err)
	}()
	go func() { defer wg.Done(); m.ctl.SampleTimeline(mctx) }()
	go func() { defer wg.Done(); m.ctl.WatchSecrets(mctx, isLeader) }()
	go func() { wg.Wait(); close(done) }()
}

// follow brings the fleet's controllers in line with the cluster's
// environments after every entry, until ctx ends.
func (f *Fleet) follow(ctx context.Context) error {
	for {
		if err := f.Sync(); err != nil {
			return err
		}
		at := f.cluster.Index()
		if _, _, err := f.cluster.WaitIndex(ctx, at); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("fleet: watch the cluster: %w", err)
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// Sync starts a controller for each environment of the cluster the fleet
// runs none for, and stops the controller of each environment gone (or
// replaced by one of the same name and another uuid). Before Start it
// only builds and drops controllers.
func (f *Fleet) Sync() error {
	want := map[string]string{}
	defUUID := ""
	if err := f.cluster.ViewCluster(func(c *model.Cluster) error {
		defUUID = c.DefaultUUID
		for name, env := range c.Envs {
			want[name] = env.UUID
		}
		return nil
	}); err != nil {
		return fmt.Errorf("fleet: read the environments: %w", err)
	}
	var gone []*member
	f.mu.Lock()
	f.members[""].uuid = defUUID
	for name, m := range f.members {
		if name == "" {
			continue
		}
		if uuid, ok := want[name]; !ok || uuid != m.uuid {
			delete(f.members, name)
			gone = append(gone, m)
		}
	}
	for name, uuid := range want {
		if f.members[name] != nil {
			continue
		}
		m := f.newMember(name, uuid)
		f.members[name] = m
		if f.ctx != nil {
			f.run(f.ctx, m)
		}
		f.opts.Log.Info("environment controller started", "env", name)
	}
	f.mu.Unlock()
	for _, m := range gone {
		if m.stop != nil {
			m.stop()
			<-m.done
		}
		f.opts.Log.Info("environment controller stopped", "env", m.name)
	}
	return nil
}

// gone says whether m's environment is no longer in the cluster.
func (f *Fleet) gone(m *member) bool {
	gone := false
	_ = f.cluster.ViewCluster(func(c *model.Cluster) error {
		env := c.Envs[m.name]
		gone = env == nil || env.UUID != m.uuid
		return nil
	})
	return gone
}
