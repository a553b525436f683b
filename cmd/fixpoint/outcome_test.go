package main

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
)

// summaryOf is a summary with the given counts and units in error.
func summaryOf(index uint64, p engine.PhaseCounts, errs ...string) *engine.Summary {
	s := &engine.Summary{Index: index, Phases: p, Converged: p.Pending+p.Reconciling+p.Error == 0, Summary: "scripted"}
	for _, u := range errs {
		s.Errors = append(s.Errors, engine.UnitBrief{Unit: u, Phase: engine.Error, Message: "boom on " + u})
	}
	return s
}

// A fixed point over every unit but those on a lost machine is not a
// fixed point: the wait ends with exit 5, not 0, naming the machine.
func TestWaitOnALostMachineExits5(t *testing.T) {
	sum := summaryOf(47, engine.PhaseCounts{Units: 5, Lost: 5})
	code := exitOf(sum.Outcome(false))
	if code != exitLost {
		t.Fatalf("exit %d; want %d", code, exitLost)
	}
	sum.LostMachines = []engine.LostMachine{{Machine: "m1", Units: []string{"web/0", "web/1"}, MoreUnits: 3}}
	var ee *exitError
	if err := quietly(func() error { return convergeExit(code, sum, nil, time.Minute, true, false) }); !errors.As(err, &ee) || ee.code != exitLost ||
		!strings.Contains(ee.msg, "machine m1 lost; waiting on it: web/0, web/1 and 3 more") {
		t.Fatalf("convergeExit: %v", err)
	}
}

// --keep-going: once every unit not in error settled, the wait exits 3
// naming the units in error.
func TestWaitKeepGoingNamesTheErrors(t *testing.T) {
	sum := summaryOf(12, engine.PhaseCounts{Units: 4, Error: 2, Settled: 2}, "db/0", "web/0")
	code := exitOf(sum.Outcome(true))
	if code != exitUnitErr {
		t.Fatalf("exit %d; want %d", code, exitUnitErr)
	}
	var ee *exitError
	if err := quietly(func() error { return convergeExit(code, sum, nil, time.Minute, false, true) }); !errors.As(err, &ee) ||
		!strings.Contains(ee.msg, "2 unit(s) in error: db/0 (boom on db/0); web/0 (boom on web/0); every other unit settled") {
		t.Fatalf("convergeExit: %v", err)
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
