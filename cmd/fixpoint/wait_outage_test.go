package main

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"strings"
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

func (s *scriptedSource) Status(ctx context.Context, stale bool, index uint64, wait time.Duration) (*engine.Status, error) {
	return nil, errors.New("not scripted")
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
	var out bytes.Buffer
	code, sum, err := waitConverged(context.Background(), src, &progress{w: &out}, time.Minute, false)
	if err != nil || code != exitOK || sum == nil || sum.Index != 9 {
		t.Fatalf("waitConverged = %d, %+v, %v; want exit 0 at index 9", code, sum, err)
	}
	if src.polls != 4 {
		t.Fatalf("%d polls, want 4", src.polls)
	}
	if n := strings.Count(out.String(), "control plane cannot answer now"); n != 1 {
		t.Fatalf("outage reported %d times, want once:\n%s", n, out.String())
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
		code, _, err := waitConverged(context.Background(), src, nil, time.Minute, false)
		if code != exitFailed || err == nil || src.polls != 1 {
			t.Errorf("%s: exit %d after %d polls, err %v; want exit %d after 1 poll", name, code, src.polls, err, exitFailed)
		}
	}
}
