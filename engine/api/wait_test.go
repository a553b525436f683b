package api

import (
	"context"
	"errors"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model/fault"
)

// scriptedSource answers WaitSummary from a script, one step per poll.
type scriptedSource struct {
	steps []func() (*engine.Summary, error)
	polls int
}

func (s *scriptedSource) WaitSummary(ctx context.Context, stale bool, prev *engine.Summary, wait time.Duration) (*engine.Summary, error) {
	if s.polls >= len(s.steps) {
		return nil, errors.New("script exhausted")
	}
	s.polls++
	return s.steps[s.polls-1]()
}

func summaryAt(index uint64, converged bool) func() (*engine.Summary, error) {
	return func() (*engine.Summary, error) {
		s := &engine.Summary{Index: index, Converged: converged, Summary: "1 unit"}
		s.Phases.Units = 1
		if converged {
			s.Phases.Settled = 1
		} else {
			s.Phases.Pending = 1
		}
		return s, nil
	}
}

func failWith(err error) func() (*engine.Summary, error) {
	return func() (*engine.Summary, error) { return nil, err }
}

var refused = &url.Error{Op: "Get", URL: "http://127.0.0.1:1/v1/status", Err: syscall.ECONNREFUSED}

// A leader election in the middle of a wait (seen in a 100,000-unit run:
// "node n2 has no leader to forward to") is waited out, with one line
// saying so, not an exit.
func TestWaitRidesThroughAnElection(t *testing.T) {
	src := &scriptedSource{steps: []func() (*engine.Summary, error){
		summaryAt(5, false),
		failWith(fault.Errorf(fault.KindNoLeader, "node n2 has no leader to forward to")),
		failWith(refused), // the old leader's process is gone
		summaryAt(9, true),
	}}
	var outages []error
	outcome, sum, err := waitConverged(context.Background(), src, WaitOptions{Outage: func(err error) { outages = append(outages, err) }})
	if err != nil || outcome != engine.FixedPoint || sum == nil || sum.Index != 9 {
		t.Fatalf("waitConverged = %d, %+v, %v; want the fixed point at index 9", outcome, sum, err)
	}
	if src.polls != 4 {
		t.Fatalf("%d polls, want 4", src.polls)
	}
	if len(outages) != 1 || !errors.Is(outages[0], ErrNoLeader) {
		t.Fatalf("outages reported: %v; want the election's, once", outages)
	}
}

// What waiting cannot mend fails at once: a refused token, and an address
// where nothing ever answered.
func TestWaitFailsAtOnceOnPermanentErrors(t *testing.T) {
	for name, step := range map[string]func() (*engine.Summary, error){
		"unauthorized":     failWith(fault.Errorf(fault.KindUnauthorized, "unknown token")),
		"never answered":   failWith(refused),
		"bad request":      failWith(fault.Errorf(fault.KindBadRequest, "summary=x is not a boolean")),
		"not an api error": failWith(errors.New("decode response: unexpected EOF")),
	} {
		src := &scriptedSource{steps: []func() (*engine.Summary, error){step, summaryAt(1, true)}}
		_, _, err := waitConverged(context.Background(), src, WaitOptions{})
		if err == nil || src.polls != 1 {
			t.Errorf("%s: err %v after %d polls; want an error after 1 poll", name, err, src.polls)
		}
	}
}

// A wait whose context ends returns the context's error and the last
// summary it read, without another poll.
func TestWaitEndsWithItsContext(t *testing.T) {
	src := &scriptedSource{steps: []func() (*engine.Summary, error){summaryAt(3, false)}}
	ctx, cancel := context.WithCancel(context.Background())
	outcome, sum, err := waitConverged(ctx, src, WaitOptions{Progress: func(*engine.Summary) { cancel() }})
	if !errors.Is(err, context.Canceled) || outcome != engine.Waiting || sum == nil || sum.Index != 3 || src.polls != 1 {
		t.Fatalf("waitConverged = %d, %+v, %v after %d polls; want context.Canceled with the summary at index 3 after 1 poll", outcome, sum, err, src.polls)
	}
}

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

// A fixed point over every unit but those on a lost machine is its own
// outcome, not the fixed point.
func TestWaitOnALostMachine(t *testing.T) {
	src := &scriptedSource{steps: []func() (*engine.Summary, error){summaryOf(47, engine.PhaseCounts{Units: 5, Lost: 5})}}
	if outcome, _, err := waitConverged(context.Background(), src, WaitOptions{}); err != nil || outcome != engine.FixedPointExceptLost {
		t.Fatalf("outcome %d, %v; want FixedPointExceptLost", outcome, err)
	}
}

// KeepGoing: a unit in error ends the wait only once every unit not in
// error settled; without it, the first error does.
func TestWaitKeepGoingWaitsForTheRest(t *testing.T) {
	steps := []func() (*engine.Summary, error){
		summaryOf(10, engine.PhaseCounts{Units: 4, Error: 1, Pending: 3}, "web/0"),
		summaryOf(11, engine.PhaseCounts{Units: 4, Error: 1, Reconciling: 1, Settled: 2}, "web/0"),
		summaryOf(12, engine.PhaseCounts{Units: 4, Error: 2, Settled: 2}, "db/0", "web/0"),
	}
	src := &scriptedSource{steps: steps}
	var seen []uint64
	outcome, sum, err := waitConverged(context.Background(), src, WaitOptions{KeepGoing: true, Progress: func(s *engine.Summary) { seen = append(seen, s.Index) }})
	if err != nil || outcome != engine.UnitsInError || src.polls != 3 || sum.Index != 12 || len(seen) != 3 {
		t.Fatalf("keep going: outcome %d after %d polls (progress at %v), %v; want units in error at the third", outcome, src.polls, seen, err)
	}
	src = &scriptedSource{steps: steps}
	if outcome, _, _ := waitConverged(context.Background(), src, WaitOptions{}); outcome != engine.UnitsInError || src.polls != 1 {
		t.Fatalf("without keep going: outcome %d after %d polls", outcome, src.polls)
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
	if outcome, _, err := waitConverged(context.Background(), src, WaitOptions{}); outcome != engine.FixedPoint || err != nil {
		t.Fatalf("outcome %d, %v; want the fixed point after the apply", outcome, err)
	}
}

// Follow hands every summary with the one before it, tries a failed poll
// again, and ends with its context.
func TestFollowHandsEveryChangeWithTheOneBefore(t *testing.T) {
	src := &scriptedSource{steps: []func() (*engine.Summary, error){summaryAt(1, false), failWith(refused), summaryAt(2, true)}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pairs [][2]uint64
	follow(ctx, src, false, nil, func(prev, sum *engine.Summary) {
		var p uint64
		if prev != nil {
			p = prev.Index
		}
		pairs = append(pairs, [2]uint64{p, sum.Index})
		if sum.Converged {
			cancel()
		}
	})
	if len(pairs) != 2 || pairs[0] != [2]uint64{0, 1} || pairs[1] != [2]uint64{1, 2} || src.polls != 3 {
		t.Fatalf("follow saw %v after %d polls; want (none, 1) then (1, 2) after 3", pairs, src.polls)
	}
}
