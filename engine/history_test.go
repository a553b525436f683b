package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/wire"
)

// claimAll claims machine m's stale units, by unit.
func claimAll(t *testing.T, ctl *Controller) map[string]wire.Work {
	t.Helper()
	work, err := ctl.WaitForWork(context.Background(), "m", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]wire.Work{}
	for _, w := range work {
		out[w.Unit] = w
	}
	return out
}

func TestHistoryRecordsRunsWithDiffsAndStderr(t *testing.T) {
	s := newMemStore()
	shop(t, s, 1, 1)
	ctl := NewController(s, Options{Window: time.Millisecond})
	var observed []Run
	ctl.History().Observe(func(r Run) { observed = append(observed, r) })
	ctx := context.Background()

	claimed := claimAll(t, ctl)
	w := claimed["web/0"]
	r := charmapi.NewResult()
	r.SetLocal(w.Universe.RelationsNamed("db")[0].Ident, map[string]string{"database": "shop"})
	out, _ := json.Marshal(r.Waiting("waiting for db access"))
	if _, err := ctl.Accept(ctx, "m", []wire.Report{{Unit: "web/0", Hash: w.Hash, Output: out, Duration: 40 * time.Millisecond, Stderr: "connecting\nno access yet\n"}}); err != nil {
		t.Fatal(err)
	}
	runs, seq := ctl.History().Runs("web/0", 0)
	if len(runs) != 1 || seq != 1 {
		t.Fatalf("runs %+v, seq %d", runs, seq)
	}
	run := runs[0]
	if run.Outcome != RunOK || run.Hash != w.Hash || run.Duration != 40*time.Millisecond || run.Service != "web" || run.Stderr != "connecting\nno access yet" {
		t.Errorf("run: %+v", run)
	}
	var lines []string
	for _, c := range run.Changes {
		lines = append(lines, c.String())
	}
	got := strings.Join(lines, "\n")
	want := "status: \"waiting: installing\" -> \"waiting: waiting for db access\"\nrelations.db:1.local.database: (unset) -> \"shop\""
	if got != want {
		t.Errorf("changes:\n%s\nwant:\n%s", got, want)
	}

	// A failing run says why.
	w = claimed["db/0"]
	if _, err := ctl.Accept(ctx, "m", []wire.Report{{Unit: "db/0", Hash: w.Hash, Error: "hook reconcile exited with status 3", Stderr: "boom"}}); err != nil {
		t.Fatal(err)
	}
	runs, _ = ctl.History().Runs("", 1)
	if len(runs) != 1 || runs[0].Unit != "db/0" || runs[0].Outcome != RunError || !strings.Contains(runs[0].Error, "status 3") || runs[0].Stderr != "boom" {
		t.Fatalf("after seq 1: %+v", runs)
	}
	// A report for a universe that is not current is a stale run.
	if _, err := ctl.Accept(ctx, "m", []wire.Report{{Unit: "web/0", Hash: "nope"}}); err != nil {
		t.Fatal(err)
	}
	runs, _ = ctl.History().Runs("web", 0)
	if len(runs) != 2 || runs[1].Outcome != RunStale {
		t.Fatalf("web runs: %+v", runs)
	}
	if len(observed) != 3 {
		t.Errorf("observed %d runs, want 3", len(observed))
	}
}

func TestHistoryIsBoundedPerUnit(t *testing.T) {
	h := NewHistory(5)
	for i := range 12 {
		h.Add(Run{Unit: "a/0", Hash: fmt.Sprint(i)}, Run{Unit: "b/0", Hash: fmt.Sprint(i)})
	}
	runs, seq := h.Runs("a/0", 0)
	if len(runs) != 5 || seq != 24 || runs[0].Hash != "7" || runs[4].Hash != "11" {
		t.Fatalf("runs %+v seq %d", runs, seq)
	}
	if all, _ := h.Runs("", 0); len(all) != 10 {
		t.Fatalf("%d runs kept in all, want 10", len(all))
	}
	if got := tail(strings.Repeat("x", 10)+"\nlast line\n", 12); got != "…\nlast line" {
		t.Errorf("tail: %q", got)
	}
}

func TestHistoryWaitBlocksUntilARunArrives(t *testing.T) {
	h := NewHistory(0)
	h.Add(Run{Unit: "a/0"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if runs, seq := h.Wait(ctx, "b", 1); len(runs) != 0 || seq != 1 {
		t.Fatalf("wait with nothing new: %v %d", runs, seq)
	}
	done := make(chan []Run)
	go func() {
		runs, _ := h.Wait(context.Background(), "b", 1)
		done <- runs
	}()
	h.Add(Run{Unit: "a/0"}, Run{Unit: "b/3"})
	select {
	case runs := <-done:
		if len(runs) != 1 || runs[0].Unit != "b/3" || runs[0].Seq != 3 {
			t.Fatalf("woke with %+v", runs)
		}
	case <-time.After(time.Minute):
		t.Fatal("Wait did not wake")
	}
	if Match("web", "webx/0") || !Match("web", "web/1") || Match("web/1", "web/10") {
		t.Error("Match")
	}
}

// TestHistorySharesWhatRunsRepeat: two units' runs that change the same
// key to the same short value keep one copy of each, a long value stays
// each run's own, and the table of shared strings stays bounded however
// many keys charms make up.
func TestHistorySharesWhatRunsRepeat(t *testing.T) {
	h := NewHistory(0)
	long := strings.Repeat("x", maxShared+1)
	run := func(unit string) Run {
		// Built as a result's diff builds them: fresh strings each run.
		return Run{Unit: unit, Changes: []Change{
			{Key: "relations." + "db:1.local.host", Old: "(unset)", New: strconv.Quote("10.0.0.1")},
			{Key: "state." + "blob", New: strings.Clone(long)},
		}}
	}
	h.Add(run("a/0"), run("a/1"))
	runs, _ := h.Runs("", 0)
	if len(runs) != 2 {
		t.Fatalf("%d runs kept; want 2", len(runs))
	}
	x, y := runs[0].Changes, runs[1].Changes
	if unsafe.StringData(x[0].Key) != unsafe.StringData(y[0].Key) || unsafe.StringData(x[0].New) != unsafe.StringData(y[0].New) {
		t.Error("two runs keep their own copies of the same key and value; want one shared")
	}
	if unsafe.StringData(x[1].New) == unsafe.StringData(y[1].New) {
		t.Error("a long value is shared; want it each run's own")
	}
	for i := range 3 * maxSharedN {
		h.Add(Run{Unit: "a/0", Changes: []Change{{Key: "state.k" + strconv.Itoa(i)}}})
	}
	h.mu.Lock()
	n := len(h.shared)
	h.mu.Unlock()
	if n > maxSharedN {
		t.Errorf("the history shares %d strings; want at most %d", n, maxSharedN)
	}
}
