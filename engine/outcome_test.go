package engine

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

func TestOutcomeRule(t *testing.T) {
	errs := []UnitBrief{{Unit: "web/0", Phase: Error, Message: "boom"}}
	cases := []struct {
		name      string
		sum       Summary
		keepGoing bool
		want      Outcome
	}{
		{"settled", Summary{Converged: true, Phases: PhaseCounts{Units: 2, Settled: 2}}, false, FixedPoint},
		{"settled, blocked", Summary{Converged: true, Phases: PhaseCounts{Units: 2, Settled: 2, Blocked: 1}}, false, FixedPoint},
		{"units on a lost machine", Summary{Converged: true, Phases: PhaseCounts{Units: 5, Lost: 5}}, false, FixedPointExceptLost},
		{"some on a lost machine", Summary{Converged: true, Phases: PhaseCounts{Units: 5, Settled: 3, Lost: 2}}, true, FixedPointExceptLost},
		{"pending", Summary{Phases: PhaseCounts{Units: 2, Settled: 1, Pending: 1}}, false, Waiting},
		{"error", Summary{Phases: PhaseCounts{Units: 2, Pending: 1, Error: 1}, Errors: errs}, false, UnitsInError},
		{"error, the rest pending, keep going", Summary{Phases: PhaseCounts{Units: 3, Pending: 1, Error: 1, Settled: 1}, Errors: errs}, true, Waiting},
		{"error, the rest reconciling, keep going", Summary{Phases: PhaseCounts{Units: 3, Reconciling: 1, Error: 1, Settled: 1}, Errors: errs}, true, Waiting},
		{"error, the rest settled, keep going", Summary{Phases: PhaseCounts{Units: 3, Error: 1, Settled: 2}, Errors: errs}, true, UnitsInError},
		{"old error while up applies", Summary{Applying: true, Phases: PhaseCounts{Units: 2, Error: 1, Settled: 1}, Errors: errs}, false, Waiting},
	}
	for _, c := range cases {
		if got := c.sum.Outcome(c.keepGoing); got != c.want {
			t.Errorf("%s: outcome %d, want %d", c.name, got, c.want)
		}
	}
}

// TestLostMachinesNameTheirUnits: status and its summary name each lost
// machine with the units waiting on it, and a waiter never reads that as
// a plain fixed point.
func TestLostMachinesNameTheirUnits(t *testing.T) {
	ctx := context.Background()
	s := newMemStore()
	shop(t, s, 2, 3)
	ctl := NewController(s, Options{Window: time.Millisecond})
	converge(t, ctl)
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpLiveness, Liveness: &model.SetLiveness{Lost: map[string]bool{"m": true}}}); err != nil {
		t.Fatal(err)
	}
	want := []LostMachine{{Machine: "m", Units: []string{"db/0", "db/1", "web/0", "web/1", "web/2"}}}
	full, err := ctl.Status()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(full.LostMachines, want) {
		t.Fatalf("status lost machines %+v, want %+v", full.LostMachines, want)
	}
	sum, err := ctl.Summary(2)
	if err != nil {
		t.Fatal(err)
	}
	wantSum := []LostMachine{{Machine: "m", Units: []string{"db/0", "db/1"}, MoreUnits: 3}}
	if !reflect.DeepEqual(sum.LostMachines, wantSum) {
		t.Fatalf("summary lost machines %+v, want %+v", sum.LostMachines, wantSum)
	}
	if got := sum.Outcome(false); got != FixedPointExceptLost {
		t.Fatalf("outcome %d over %q, want FixedPointExceptLost", got, sum.Summary)
	}
	data, _ := json.Marshal(sum)
	if !strings.Contains(string(data), `"lost_machines":[{"machine":"m","units":["db/0","db/1"],"more_units":3}]`) {
		t.Fatalf("summary JSON lacks lost_machines: %s", data)
	}
	// Back: nothing waits on a lost machine any more.
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpLiveness, Liveness: &model.SetLiveness{Lost: map[string]bool{"m": false}}}); err != nil {
		t.Fatal(err)
	}
	converge(t, ctl)
	if sum, _ = ctl.Summary(2); sum.LostMachines != nil || sum.Outcome(false) != FixedPoint {
		t.Fatalf("after the machine came back: %q, lost %+v", sum.Summary, sum.LostMachines)
	}
}

// errorEnv is one service of a charm with option greeting; the hook the
// tests run fails while greeting is "fail".
func errorEnv(greeting string) (model.Environment, map[string]*model.Charm) {
	charms := map[string]*model.Charm{
		"h-app": {Hash: "h-app", Meta: model.CharmMeta{Name: "app", Options: map[string]model.Option{"greeting": {Type: "string", Default: "hi"}}}},
		"h-db":  {Hash: "h-db", Meta: model.CharmMeta{Name: "db"}},
	}
	env := model.Environment{APIVersion: model.APIVersion, Name: "errs",
		Services: map[string]model.ServiceSpec{
			"myapp": {CharmHash: "h-app", Units: intp(1), Config: map[string]any{"greeting": greeting}},
			"db":    {CharmHash: "h-db", Units: intp(1)},
		}}
	return env, charms
}

// runGreeting hands out machine m's work and reports it: a failure while
// greeting is "fail", success otherwise.
func runGreeting(t *testing.T, ctl *Controller) []string {
	t.Helper()
	ctx := context.Background()
	work, err := ctl.WaitForWork(ctx, "m", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	var reps []wire.Report
	for _, w := range work {
		ran = append(ran, w.Unit)
		if w.Universe.Config["greeting"] == "fail" {
			reps = append(reps, wire.Report{Unit: w.Unit, Hash: w.Hash, Error: "greeting failed"})
			continue
		}
		out, _ := json.Marshal(charmapi.NewResult().Active(""))
		reps = append(reps, wire.Report{Unit: w.Unit, Hash: w.Hash, Output: out})
	}
	if _, err := ctl.Accept(ctx, "m", reps); err != nil {
		t.Fatal(err)
	}
	return ran
}

// TestAnErrorFromBeforeAChangeIsNoAnswer: a unit whose hook failed is in
// error only while it sees the universe that failed. Once an operator
// changes what it sees, status says it runs again (pending, then
// reconciling), so that apply --wait does not end on the old error; a
// change it does not see leaves it in error.
func TestAnErrorFromBeforeAChangeIsNoAnswer(t *testing.T) {
	ctx := context.Background()
	s := newMemStore()
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m", Address: "10.0.0.9"}}); err != nil {
		t.Fatal(err)
	}
	deploy := func(greeting string, dbUnits int) {
		t.Helper()
		env, charms := errorEnv(greeting)
		env.Services["db"] = model.ServiceSpec{CharmHash: "h-db", Units: intp(dbUnits)}
		if _, err := s.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
			t.Fatal(err)
		}
	}
	c := NewController(s, Options{Window: time.Millisecond})
	deploy("fail", 1)
	runGreeting(t, c)
	unit := func() *UnitStatus {
		t.Helper()
		st, err := c.Status()
		if err != nil {
			t.Fatal(err)
		}
		return st.Units["myapp/0"]
	}
	sum := func() *Summary {
		t.Helper()
		sum, err := c.Summary(0)
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	if u := unit(); u.Phase != Error {
		t.Fatalf("after the failing run: %s", u.Phase)
	}
	if got := sum().Outcome(false); got != UnitsInError {
		t.Fatalf("outcome %d with myapp/0 in error", got)
	}

	// A change myapp/0 does not see (another db unit) leaves its error.
	deploy("fail", 2)
	if u := unit(); u.Phase != Error {
		t.Fatalf("after a change it does not see: %s (%s)", u.Phase, u.Reason)
	}

	// The operator changes what it sees: the error is from before.
	deploy("spin", 2)
	if u := unit(); u.Phase != Pending || !strings.Contains(u.Reason, "runs again") {
		t.Fatalf("after the apply: %s (%s), want pending", u.Phase, u.Reason)
	}
	if s := sum(); s.Outcome(false) != Waiting || len(s.Errors) != 0 {
		t.Fatalf("summary after the apply: %q, outcome %d, errors %+v", s.Summary, s.Outcome(false), s.Errors)
	}
	if ran := runGreeting(t, c); !strings.Contains(strings.Join(ran, " "), "myapp/0") {
		t.Fatalf("myapp/0 not run again after the change: ran %v", ran)
	}
	if u := unit(); u.Phase != Settled {
		t.Fatalf("after its run: %s", u.Phase)
	}

	// Failing again, then two changes that come back to the universe
	// that failed: pending while that is not known, in error again once
	// the hand-out finds it out.
	deploy("fail", 2)
	runGreeting(t, c)
	deploy("spin", 2)
	deploy("fail", 2)
	if u := unit(); u.Phase != Pending {
		t.Fatalf("after two changes: %s (%s), want pending", u.Phase, u.Reason)
	}
	runGreeting(t, c)
	if u := unit(); u.Phase != Error {
		t.Fatalf("back at the universe that failed: %s (%s)", u.Phase, u.Reason)
	}
}

// TestSummaryLineCountsBlockedBeforeTheFixedPoint: blocked units are
// counted in status's first line whether or not the rest converged.
func TestSummaryLineCountsBlockedBeforeTheFixedPoint(t *testing.T) {
	cases := map[PhaseCounts]string{
		{Units: 11, Settled: 8, Error: 3, Blocked: 1}:            "3 error, 1 blocked",
		{Units: 4, Settled: 2, Pending: 1, Error: 1, Blocked: 2}: "1 of 4 units pending, 1 error, 2 blocked",
		{Units: 4, Settled: 4, Blocked: 1}:                       "converged at index 7; 1 blocked",
	}
	st := model.NewState()
	st.Index = 7
	for counts, want := range cases {
		if got := firstLine(st, counts); got != want {
			t.Errorf("%+v: %q, want %q", counts, got, want)
		}
	}
}
