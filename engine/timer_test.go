package engine

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// classicShop is shop with db as an old-hook charm: the update-status
// timer wakes its units, never web's (a reconcile charm).
func classicShop(t *testing.T, s *memStore) {
	t.Helper()
	shop(t, s, 1, 1)
	s.mu.Lock()
	s.st.Charms["h-db"].Legacy = true
	s.mu.Unlock()
}

// runRound claims machine m's work once, runs fn on every universe and
// reports; it returns the work handed out.
func runRound(t *testing.T, ctl *Controller, fn func(*charmapi.Universe) (*charmapi.Result, string)) []wire.Work {
	t.Helper()
	ctx := context.Background()
	work, err := ctl.WaitForWork(ctx, "m", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var reps []wire.Report
	for _, w := range work {
		res, herr := fn(w.Universe)
		out, _ := json.Marshal(res)
		reps = append(reps, wire.Report{Unit: w.Unit, Hash: w.Hash, Output: out, Error: herr})
	}
	if _, err := ctl.Accept(ctx, "m", reps); err != nil {
		t.Fatal(err)
	}
	return work
}

func TestSettledClassicUnitGetsUpdateStatusAfterTheInterval(t *testing.T) {
	s := newMemStore()
	classicShop(t, s)
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	const every = time.Minute
	ctl := NewController(s, Options{Window: time.Millisecond, Now: clock.Now, UpdateStatus: every})
	fail := false
	hook := func(u *charmapi.Universe) (*charmapi.Result, string) {
		r := charmapi.NewResult()
		if rel := u.Relation("db"); rel != nil && u.Service == "web" {
			r.SetLocal(rel.Ident, map[string]string{"database": "shop"})
		}
		if fail {
			return nil, "update-status: exit status 1"
		}
		return r.Active(""), ""
	}
	for range 10 {
		if len(runRound(t, ctl, hook)) == 0 {
			break
		}
	}
	converged := func() {
		t.Helper()
		st, err := ctl.Status()
		if err != nil {
			t.Fatal(err)
		}
		if !st.Converged {
			t.Fatalf("not converged: %s", st.Summary)
		}
	}
	converged()
	wave := func() int {
		var w int
		_ = s.View(func(st *model.State) error { w = st.Units["db/0"].Wave; return nil })
		return w
	}
	before := wave()

	clock.Add(every - time.Second)
	if work := runRound(t, ctl, hook); len(work) != 0 {
		t.Fatalf("work before the timer fired: %+v", work[0].Universe.Events)
	}
	clock.Add(time.Second)
	work := runRound(t, ctl, hook)
	if len(work) != 1 || work[0].Unit != "db/0" {
		t.Fatalf("want one update-status run of db/0 (web is a reconcile charm), got %d", len(work))
	}
	if evs := work[0].Universe.Events; len(evs) != 1 || evs[0].Hook != "update-status" {
		t.Fatalf("events = %+v, want exactly update-status", evs)
	}
	converged()
	if wave() != before {
		t.Fatalf("a timer run counted towards divergence: wave %d -> %d", before, wave())
	}
	if work := runRound(t, ctl, hook); len(work) != 0 {
		t.Fatal("the timer fired twice for one interval")
	}

	// A timer run that fails is an error, retried as update-status.
	clock.Add(every)
	fail = true
	if work := runRound(t, ctl, hook); len(work) != 1 {
		t.Fatalf("want the second timer run, got %d", len(work))
	}
	fail = false
	clock.Add(time.Hour)
	work = runRound(t, ctl, hook)
	if len(work) != 1 || len(work[0].Universe.Events) != 1 || work[0].Universe.Events[0].Hook != "update-status" {
		t.Fatalf("the retry of a failed update-status must be one: %+v", work)
	}
	converged()
	if wave() != before {
		t.Fatalf("timer runs and their retries counted towards divergence: wave %d -> %d", before, wave())
	}
}

func TestUpdateStatusTimerOff(t *testing.T) {
	s := newMemStore()
	classicShop(t, s)
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	ctl := NewController(s, Options{Window: time.Millisecond, Now: clock.Now, UpdateStatus: -1})
	hook := func(u *charmapi.Universe) (*charmapi.Result, string) { return charmapi.NewResult().Active(""), "" }
	for range 10 {
		if len(runRound(t, ctl, hook)) == 0 {
			break
		}
	}
	clock.Add(24 * time.Hour)
	if work := runRound(t, ctl, hook); len(work) != 0 {
		t.Fatalf("the timer is off, yet %s ran", work[0].Unit)
	}
}

// TestModelConfigIntervalOverridesTheServers: an environment whose model
// config sets update-status-hook-interval (State.UpdateStatus) gets its
// update-status runs at that interval, not the server's.
func TestModelConfigIntervalOverridesTheServers(t *testing.T) {
	s := newMemStore()
	classicShop(t, s)
	s.mu.Lock()
	s.st.UpdateStatus = int64(time.Minute)
	s.mu.Unlock()
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	ctl := NewController(s, Options{Window: time.Millisecond, Now: clock.Now, UpdateStatus: time.Hour})
	hook := func(u *charmapi.Universe) (*charmapi.Result, string) {
		r := charmapi.NewResult()
		if rel := u.Relation("db"); rel != nil && u.Service == "web" {
			r.SetLocal(rel.Ident, map[string]string{"database": "shop"})
		}
		return r.Active(""), ""
	}
	for range 10 {
		if len(runRound(t, ctl, hook)) == 0 {
			break
		}
	}
	clock.Add(time.Minute)
	work := runRound(t, ctl, hook)
	if len(work) != 1 || work[0].Unit != "db/0" || work[0].Universe.Events[0].Hook != "update-status" {
		t.Fatalf("want db/0's update-status after the model's minute, not the server's hour; got %d runs", len(work))
	}
}
