package simdir

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/sim"
	"github.com/fixpoint/fixpoint/model"
)

// counterMeta is a reconcile charm that only says it is there.
var counterMeta = model.CharmMeta{Name: "counter"}

// writeTicker writes a classic charm whose update-status hook counts its
// runs in the unit's charm directory and says so in its status.
func writeTicker(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ticker")
	files := map[string]string{
		"metadata.yaml": "name: ticker\nsummary: counts its update-status runs\ndescription: a test charm\n",
		"hooks/start":   "#!/bin/sh\nset -e\nstatus-set active started\n",
		"hooks/update-status": "#!/bin/sh\nset -e\nn=$(cat \"$CHARM_DIR/.ticks\" 2>/dev/null || echo 0)\nn=$((n + 1))\n" +
			"echo \"$n\" > \"$CHARM_DIR/.ticks\"\nstatus-set active \"update-status ran $n times\"\n",
	}
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestUpdateStatusFiresOnceAtTheEnd: when a schedule has nothing left to
// run, the settled classic unit runs update-status once; the reconcile
// charm's units are not woken, and the report still converges.
func TestUpdateStatusFiresOnceAtTheEnd(t *testing.T) {
	ticker := writeTicker(t)
	simulate := func(opts sim.Options) (*sim.Report, int64) {
		var calls atomic.Int64
		env := NewEnv("tick")
		env.Deploy("ticker", ticker)
		env.DeployMeta("counter", counterMeta)
		env.Hook("counter", sim.Func(func(u *charmapi.Universe) (*charmapi.Result, error) {
			calls.Add(1)
			return charmapi.NewResult().Active("counting"), nil
		}))
		opts.Schedules, opts.Seed = 1, 3
		rep, err := env.Simulate(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() {
			t.Fatalf("report:\n%s", rep)
		}
		return rep, calls.Load()
	}
	rep, calls := simulate(sim.Options{})
	if got := rep.FixedPoints[0].Settings["ticker/0 status"]; got != "active: update-status ran 1 times" {
		t.Errorf("ticker/0 status = %q, want update-status to have run once", got)
	}
	off, offCalls := simulate(sim.Options{NoUpdateStatus: true})
	if got := off.FixedPoints[0].Settings["ticker/0 status"]; got != "active: started" {
		t.Errorf("with the timer off, ticker/0 status = %q", got)
	}
	if calls != offCalls {
		t.Errorf("the reconcile charm ran %d times with the timer, %d without: the timer must not wake it", calls, offCalls)
	}
	if rep.Schedules[0].Reconciles != off.Schedules[0].Reconciles {
		t.Errorf("timer runs counted as reconciles: %d against %d", rep.Schedules[0].Reconciles, off.Schedules[0].Reconciles)
	}
}
