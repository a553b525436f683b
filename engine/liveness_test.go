package engine

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/ledger"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// A heartbeat that changes nothing must not wake the long polls waiting on
// the controller: with a thousand agents beating every few seconds, each
// beat woke every claim and every status watcher.
func TestHeartbeatWakesOnlyWhenItDropsAClaim(t *testing.T) {
	s := newMemStore()
	shop(t, s, 1, 1)
	now := time.Unix(1_000_000, 0)
	ctl := NewController(s, Options{Window: 1, Now: func() time.Time { return now }})
	work, err := ctl.WaitForWork(context.Background(), "m", 0, 0)
	if err != nil || len(work) == 0 {
		t.Fatalf("claim: %v, %d units", err, len(work))
	}
	ch := ctl.Changed()
	var running []string
	for _, w := range work {
		running = append(running, w.Unit)
	}
	ctl.ReleaseExcept("m", running)
	ctl.Heartbeat("m")
	select {
	case <-ch:
		t.Fatal("a heartbeat naming every claimed unit woke the waiters")
	default:
	}
	// The agent no longer runs the first unit, and the claim is past its
	// grace: dropping it may let a wave move, so waiters look again.
	now = now.Add(ledger.ClaimGrace + time.Second)
	ctl.ReleaseExcept("m", running[1:])
	select {
	case <-ch:
	default:
		t.Fatal("a heartbeat that dropped a claim woke nobody")
	}
}

// livenessLog is a memStore that keeps every liveness decision applied.
type livenessLog struct {
	*memStore
	mu   sync.Mutex
	seen []map[string]bool
}

func (l *livenessLog) Apply(ctx context.Context, c *model.Command) (*model.Response, error) {
	if c.Op == model.OpLiveness {
		l.mu.Lock()
		l.seen = append(l.seen, maps.Clone(c.Liveness.Lost))
		l.mu.Unlock()
	}
	return l.memStore.Apply(ctx, c)
}

func (l *livenessLog) decisions() []map[string]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen)
}

// A new leader inherits machines the old one judged lost. It gives agents
// of machines believed alive a TTL to reach it, but a lost machine stays
// lost, and gets no units, until its own agent is heard from.
func TestNewLeaderKeepsLostMachinesLost(t *testing.T) {
	s := &livenessLog{memStore: newMemStore()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, m := range []string{"a", "b"} {
		if _, err := s.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: m, Address: "10.0.0.1"}}); err != nil {
			t.Fatal(err)
		}
	}
	// The old leader's last word: a's agent went silent.
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpLiveness, Liveness: &model.SetLiveness{Lost: map[string]bool{"a": true}}}); err != nil {
		t.Fatal(err)
	}
	ctl := NewController(s, Options{AgentTTL: 150 * time.Millisecond})
	var ticks atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctl.WatchAgents(ctx, func() bool {
			ctl.Heartbeat("b") // b's agent beats every tick
			ticks.Add(1)
			return true
		})
	}()
	// Each tick asks isLeader first: after n asks, n-1 ticks have judged.
	rafttest.Until(t, time.Minute, "three liveness ticks", func() bool { return ticks.Load() >= 4 })
	for _, d := range s.decisions()[1:] {
		if !d["a"] {
			t.Fatalf("the new leader marked lost machine a alive: %v", d)
		}
	}
	charms := map[string]*model.Charm{"h-db": {Hash: "h-db", Meta: model.CharmMeta{Name: "db"}}}
	env := model.Environment{APIVersion: model.APIVersion, Name: "shop",
		Services: map[string]model.ServiceSpec{"db": {CharmHash: "h-db", Units: intp(4)}}}
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(st *model.State) error {
		for name, u := range st.Units {
			if u.Machine != "b" {
				t.Errorf("%s placed on %q, want b (a is lost)", name, u.Machine)
			}
		}
		return nil
	})
	// a's agent reaches the new leader: a is back.
	before := len(s.decisions())
	ctl.Heartbeat("a")
	rafttest.Until(t, time.Minute, "a marked alive after its agent was heard", func() bool {
		for _, d := range s.decisions()[before:] {
			if !d["a"] {
				return true
			}
		}
		return false
	})
	cancel()
	<-done
}

// A poll whose agent left while the pass claimed its work (the request's
// context ended, e.g. the client's deadline passed during a long pass)
// gives the work back: the units are handed out again at the next poll
// instead of waiting for a heartbeat to drop claims nobody received.
func TestAPollWhoseAgentLeftGivesItsWorkBack(t *testing.T) {
	s := newMemStore()
	shop(t, s, 1, 1)
	now := time.Unix(1_000_000, 0)
	gone, cancel := context.WithCancel(context.Background())
	leaving := &leaveAfterRead{memStore: s, leave: cancel}
	ctl := NewController(leaving, Options{Window: 1, Now: func() time.Time { return now }})
	leaving.armed.Store(true)
	if work, err := ctl.WaitForWork(gone, "m", 0, 0); err == nil || len(work) != 0 {
		t.Fatalf("a poll whose agent left answered %d units, %v; want its context's error", len(work), err)
	}
	if n := claimsHeld(t, ctl); n != 0 {
		t.Fatalf("%d claims held for an answer nobody received", n)
	}
	work, err := ctl.WaitForWork(context.Background(), "m", 0, 0)
	if err != nil || len(work) != 2 {
		t.Fatalf("the next poll: %v, %d units; want both units given back", err, len(work))
	}
}

// leaveAfterRead is a store whose next read, once armed, ends a poll's
// context as the read returns: the agent leaves while the pass claims.
type leaveAfterRead struct {
	*memStore
	armed atomic.Bool
	leave func()
}

func (l *leaveAfterRead) View(fn func(*model.State) error) error {
	err := l.memStore.View(fn)
	if l.armed.CompareAndSwap(true, false) {
		l.leave()
	}
	return err
}
