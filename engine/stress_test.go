package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// TestClaimsReportsWakesAndLeaderChangesInterleave drives every path that
// takes the ledger's, the waiters' and the pass queue's locks at once, for
// the race detector and the lock order: ten agents long-poll, report,
// drop work, give it back by leaving mid-poll and restart (Release,
// ReleaseExcept); an operator changes a service's config; the node loses
// and regains the leadership (every claim and view forgotten); status is
// read throughout. Once the operator and the leader changes stop, the
// agents must bring the environment to its fixed point with no claim
// left: nothing the interleavings did was lost.
func TestClaimsReportsWakesAndLeaderChangesInterleave(t *testing.T) {
	mem, _, machines := tenMachinesSettled(t)
	s := &logStore{memStore: mem}
	var leading atomic.Bool
	leading.Store(true)
	ctl := NewController(s, Options{Window: time.Millisecond, IsLeader: leading.Load, Lease: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := ctl.Start(ctx)
	defer func() { cancel(); <-stopped }()

	var calm atomic.Bool // the operator and the leader changes are over
	var wg sync.WaitGroup
	for i, m := range machines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agent(ctx, ctl, m, rand.New(rand.NewPCG(uint64(i), 39)), &calm)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if _, err := ctl.Summary(0); err != nil {
				t.Errorf("summary: %v", err)
				return
			}
			if _, err := ctl.Status(); err != nil {
				t.Errorf("status: %v", err)
				return
			}
			select {
			case <-ctx.Done():
			case <-ctl.Changed():
			}
		}
	}()

	for n := 2; n < 300; n++ {
		seen := ctl.Changed()
		twoServices(t, mem, n)
		switch n % 7 {
		case 0:
			// Another node leads for an entry: a follower forgets
			// its claims and views at its next entry.
			leading.Store(false)
			twoServices(t, mem, n)
			leading.Store(true)
		case 3:
			// A new term on this node: what a leader change does.
			ctl.work.apply(ctl.work.ledger.Forget())
		}
		// The controller took the change in before the next.
		select {
		case <-seen:
		case <-time.After(time.Minute): // bounds a failure only
			t.Fatal("the controller did not take a change in")
		}
	}
	calm.Store(true)
	// The last change is applied and led: a refresh takes it in.
	if err := ctl.Refresh(); err != nil {
		t.Fatal(err)
	}
	rafttest.Until(t, time.Minute, "the fixed point, every claim reported", func() bool {
		st, err := ctl.Status()
		return err == nil && st.Converged && claimsHeld(t, ctl) == 0
	})
	cancel()
	wg.Wait()
	ws := ctl.Stats()
	if ws.Passes == 0 || ws.Pushed == 0 || ws.Wakeups == 0 {
		t.Fatalf("work %+v: the agents were never woken or pushed, so nothing interleaved", ws)
	}
	t.Logf("work %+v", ws)
}

// agent polls machine's work until ctx ends, as an agent does, reporting
// most of what it gets; until calm it also drops work (the next heartbeat
// releases it), leaves a poll mid-way (the work is given back) or
// restarts (Release).
func agent(ctx context.Context, ctl *Controller, machine string, rng *rand.Rand, calm *atomic.Bool) {
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, time.Duration(rng.IntN(20))*time.Millisecond)
		work, err := ctl.WaitForWork(pctx, machine, 1+rng.IntN(3), 10*time.Millisecond)
		cancel()
		if err != nil && ctx.Err() == nil && pctx.Err() == nil {
			panic(fmt.Sprintf("poll of %s: %v", machine, err))
		}
		wild := !calm.Load()
		var reports []wire.Report
		var running []string
		for _, w := range work {
			if w.Action != nil {
				continue
			}
			if wild && rng.IntN(5) == 0 {
				continue // lost on the way: the next heartbeat drops it
			}
			running = append(running, w.Unit)
			reports = append(reports, wire.Report{Unit: w.Unit, Hash: w.Hash, Output: []byte(`{}`)})
		}
		switch {
		case wild && rng.IntN(10) == 0:
			ctl.Release(machine)
		case wild && rng.IntN(3) == 0:
			ctl.ReleaseExcept(machine, running)
		default:
			ctl.Heartbeat(machine)
		}
		if len(reports) > 0 {
			if _, err := ctl.Accept(ctx, machine, reports); err != nil && ctx.Err() == nil {
				panic(fmt.Sprintf("report of %s: %v", machine, err))
			}
		}
	}
}
