package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// TestTimelineFollowsTheLastApply: each summary whose counts moved adds a
// sample; an apply starts the series over.
func TestTimelineFollowsTheLastApply(t *testing.T) {
	s := newMemStore()
	shop(t, s, 1, 1)
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	ctl := NewController(s, Options{Window: 1, Now: clock.Now, Lease: time.Minute})
	if _, err := ctl.Summary(0); err != nil {
		t.Fatal(err)
	}
	first := ctl.Timeline()
	if len(first.Samples) != 1 || first.Samples[0].Pending != 2 || first.Samples[0].Units != 2 || !first.Start.Equal(clock.Now()) {
		t.Fatalf("after the first summary: %+v", first)
	}
	clock.Add(time.Second)
	work, err := ctl.WaitForWork(context.Background(), "m", 0, 0)
	if err != nil || len(work) == 0 {
		t.Fatalf("claim: %v, %d units", err, len(work))
	}
	if _, err := ctl.Summary(0); err != nil {
		t.Fatal(err)
	}
	// The same counts again add nothing.
	ctl.NoteChange()
	if _, err := ctl.Summary(0); err != nil {
		t.Fatal(err)
	}
	second := ctl.Timeline()
	if len(second.Samples) != 2 || second.Samples[1].Reconciling != len(work) || !second.Samples[1].Time.Equal(clock.Now()) {
		t.Fatalf("after the hand-out: %+v", second)
	}

	clock.Add(time.Second)
	shop(t, s, 2, 1)
	if _, err := ctl.Summary(0); err != nil {
		t.Fatal(err)
	}
	third := ctl.Timeline()
	if third.EnvIndex <= first.EnvIndex || len(third.Samples) != 1 || third.Samples[0].Units != 3 || !third.Start.Equal(clock.Now()) {
		t.Fatalf("after the second apply: %+v (first %+v)", third, first)
	}
}

// TestTimelineStaysBounded: a long convergence keeps at most
// TimelineLimit samples, from its start to its latest counts, in time
// order and at least a step apart.
func TestTimelineStaysBounded(t *testing.T) {
	var tl timeline
	start := time.Unix(1_000_000, 0)
	const n = 5 * TimelineLimit
	for i := range n {
		tl.record(7, uint64(i+1), start.Add(time.Duration(i)*time.Second), PhaseCounts{Units: n, Settled: i, Pending: n - i})
	}
	got := tl.snapshot()
	if len(got.Samples) > TimelineLimit || len(got.Samples) < TimelineLimit/4 {
		t.Fatalf("%d samples kept of %d, want at most %d and not far fewer", len(got.Samples), n, TimelineLimit)
	}
	if f := got.Samples[0]; f.Settled != 0 || !f.Time.Equal(start) {
		t.Errorf("first sample %+v, want the series' start", f)
	}
	if l := got.Samples[len(got.Samples)-1]; l.Settled != n-1 {
		t.Errorf("last sample %+v, want the latest counts", l)
	}
	step := time.Duration(got.StepMillis) * time.Millisecond
	if step <= timelineStep {
		t.Errorf("step %v after thinning, want more than %v", step, timelineStep)
	}
	for i := 1; i < len(got.Samples)-1; i++ {
		if d := got.Samples[i].Time.Sub(got.Samples[i-1].Time); d < time.Second {
			t.Fatalf("samples %d and %d are %v apart:\n%+v", i-1, i, d, got.Samples)
		}
	}
}

// TestTimelineReplacesSamplesCloserThanItsStep: a burst of changes
// within the step keeps the counts before it and its last ones.
func TestTimelineReplacesSamplesCloserThanItsStep(t *testing.T) {
	var tl timeline
	start := time.Unix(1_000_000, 0)
	tl.record(3, 1, start, PhaseCounts{Units: 4, Pending: 4})
	for i := 1; i <= 4; i++ {
		tl.record(3, uint64(1+i), start.Add(time.Duration(i)*time.Millisecond), PhaseCounts{Units: 4, Pending: 4 - i, Settled: i})
	}
	got := tl.snapshot()
	if len(got.Samples) != 2 || got.Samples[0].Pending != 4 || got.Samples[1].Settled != 4 || got.Samples[1].Index != 5 {
		t.Fatalf("samples %+v, want the first and the last", got.Samples)
	}
}

// TestSampleTimelineCountsWithoutAsking: nobody asks for status, yet the
// series follows the units as they are handed out.
func TestSampleTimelineCountsWithoutAsking(t *testing.T) {
	s := newMemStore()
	shop(t, s, 1, 2)
	ctl := NewController(s, Options{Window: 1, Lease: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctl.SampleTimeline(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	rafttest.Eventually(t, time.Minute, "a first sample", func() error {
		if tl := ctl.Timeline(); len(tl.Samples) == 0 || tl.Samples[len(tl.Samples)-1].Pending != 3 {
			return fmt.Errorf("timeline %+v", tl)
		}
		return nil
	})
	work, err := ctl.WaitForWork(context.Background(), "m", 0, 0)
	if err != nil || len(work) == 0 {
		t.Fatalf("claim: %v, %d units", err, len(work))
	}
	rafttest.Eventually(t, time.Minute, "the hand-out sampled", func() error {
		if tl := ctl.Timeline(); tl.Samples[len(tl.Samples)-1].Reconciling != len(work) {
			return fmt.Errorf("timeline %+v", tl)
		}
		return nil
	})
}
