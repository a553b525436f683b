package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
)

// summaryOf is a scripted summary with the given counts and units in error.
func summaryOf(index uint64, p engine.PhaseCounts, errs ...string) func() (*engine.Summary, error) {
	return func() (*engine.Summary, error) {
		s := &engine.Summary{Index: index, Phases: p, Converged: p.Pending+p.Reconciling+p.Error == 0, Summary: "scripted"}
		for _, u := range errs {
			s.Errors = append(s.Errors, engine.UnitBrief{Unit: u, Phase: engine.Error, Message: "boom on " + u})
		}
		return s, nil
	}
}

// A fixed point over every unit but those on a lost machine is not a
// fixed point: the wait ends with exit 5, not 0.
func TestWaitOnALostMachineExits5(t *testing.T) {
	lost := summaryOf(47, engine.PhaseCounts{Units: 5, Lost: 5})
	src := &scriptedSource{steps: []func() (*engine.Summary, error){lost}}
	code, _, err := waitConverged(context.Background(), src, nil, time.Minute, false)
	if err != nil || code != exitLost {
		t.Fatalf("exit %d, %v; want %d", code, err, exitLost)
	}
	sum, _ := lost()
	sum.LostMachines = []engine.LostMachine{{Machine: "m1", Units: []string{"web/0", "web/1"}, MoreUnits: 3}}
	var ee *exitError
	if err := quietly(func() error { return convergeExit(code, sum, nil, time.Minute, true, false) }); !errors.As(err, &ee) || ee.code != exitLost ||
		!strings.Contains(ee.msg, "machine m1 lost; waiting on it: web/0, web/1 and 3 more") {
		t.Fatalf("convergeExit: %v", err)
	}
}

// --keep-going: a unit in error ends the wait only once every unit not in
// error settled; the errors are named then.
func TestWaitKeepGoingWaitsForTheRest(t *testing.T) {
	steps := []func() (*engine.Summary, error){
		summaryOf(10, engine.PhaseCounts{Units: 4, Error: 1, Pending: 3}, "web/0"),
		summaryOf(11, engine.PhaseCounts{Units: 4, Error: 1, Reconciling: 1, Settled: 2}, "web/0"),
		summaryOf(12, engine.PhaseCounts{Units: 4, Error: 2, Settled: 2}, "db/0", "web/0"),
	}
	src := &scriptedSource{steps: steps}
	code, sum, err := waitConverged(context.Background(), src, nil, time.Minute, true)
	if err != nil || code != exitUnitErr || src.polls != 3 || sum.Index != 12 {
		t.Fatalf("keep going: exit %d after %d polls, %v; want exit 3 at the third", code, src.polls, err)
	}
	var ee *exitError
	if err := quietly(func() error { return convergeExit(code, sum, nil, time.Minute, false, true) }); !errors.As(err, &ee) ||
		!strings.Contains(ee.msg, "2 unit(s) in error: db/0 (boom on db/0); web/0 (boom on web/0); every other unit settled") {
		t.Fatalf("convergeExit: %v", err)
	}
	// Without it, the first error ends the wait.
	src = &scriptedSource{steps: steps}
	if code, _, _ := waitConverged(context.Background(), src, nil, time.Minute, false); code != exitUnitErr || src.polls != 1 {
		t.Fatalf("without keep going: exit %d after %d polls", code, src.polls)
	}
}

// An error left from before `up` applied its environment does not end a
// wait on that up.
func TestWaitIgnoresErrorsWhileUpApplies(t *testing.T) {
	applying := func() (*engine.Summary, error) {
		s, _ := summaryOf(3, engine.PhaseCounts{Units: 2, Error: 1, Settled: 1}, "web/0")()
		s.SetApplying()
		return s, nil
	}
	src := &scriptedSource{steps: []func() (*engine.Summary, error){applying, summaryOf(5, engine.PhaseCounts{Units: 2, Settled: 2})}}
	if code, _, err := waitConverged(context.Background(), src, nil, time.Minute, false); code != exitOK || err != nil {
		t.Fatalf("exit %d, %v; want 0 after the apply", code, err)
	}
}

// quietly runs f with stdout sent to a buffer: convergeExit prints the
// table first.
func quietly(f func() error) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	stdout := os.Stdout
	os.Stdout = w
	done := make(chan struct{})
	var b bytes.Buffer
	go func() { _, _ = b.ReadFrom(r); close(done) }()
	ferr := f()
	os.Stdout = stdout
	w.Close()
	<-done
	r.Close()
	return ferr
}

// Status names each lost machine and the units waiting on it on a line
// under the summary, in the table and in the summary by service.
func TestStatusNamesLostMachines(t *testing.T) {
	st := sampleStatus()
	st.LostMachines = []engine.LostMachine{{Machine: "m2", Units: []string{"db/1", "web/10"}}}
	var b bytes.Buffer
	printStatusTo(&b, st, st, false)
	lines := strings.Split(b.String(), "\n")
	if lines[1] != "machine m2 lost; waiting on it: db/1, web/10" {
		t.Fatalf("the line under the summary is %q:\n%s", lines[1], b.String())
	}
	b.Reset()
	printSummary(&b, &engine.Summary{Summary: "converged over 3 of 25 units at index 9; machine m2 lost",
		LostMachines: []engine.LostMachine{{Machine: "m2", Units: []string{"db/1"}, MoreUnits: 21}}})
	if lines = strings.Split(b.String(), "\n"); lines[1] != "machine m2 lost; waiting on it: db/1 and 21 more" {
		t.Fatalf("the summary's line under its first is %q:\n%s", lines[1], b.String())
	}
}
