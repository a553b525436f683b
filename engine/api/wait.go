package api

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model/backoff"
)

// A waiter polls the status summary, not the status: the status grows
// with the units and is built under the lock hand-outs wait for, while a
// waiter needs only the counts and the first units in error. Each poll
// passes the summary it last saw, so that a unit settling without a new
// log entry (its claim ends, its rebuilt universe hashes as before) moves
// the status generation and answers the poll; nothing is missed between
// polls.

// summaryPoller is what a waiter polls: WaitSummary returns once the
// status moved past prev, a phase change without a new entry included.
// *Client is the one that talks to a control plane.
type summaryPoller interface {
	WaitSummary(ctx context.Context, stale bool, prev *engine.Summary, wait time.Duration) (*engine.Summary, error)
}

// WaitOptions tune WaitConverged.
type WaitOptions struct {
	// KeepGoing waits, once a unit is in error, for every other unit to
	// settle before it reports the errors (engine.Summary.Outcome).
	KeepGoing bool
	// Progress, when set, is given every summary the wait reads.
	Progress func(*engine.Summary)
	// Outage, when set, is told once per outage that the control plane
	// cannot answer now, with the error, while the wait rides it out.
	Outage func(error)
}

// WaitConverged follows the status summary until it has an outcome
// (engine.Summary.Outcome, the one rule behind the waiters' exit codes):
// the fixed point, the fixed point but for units on lost machines, or
// units in error. It returns that outcome and the last summary.
//
// A control plane that cannot answer for a while (an election, a node
// restarting) is waited out once it has answered; what waiting cannot
// mend (a refused token, a wrong address, a bad request) returns its
// error at once. When ctx ends first, WaitConverged returns ctx's error
// and the last summary it read (nil if none).
func (c *OperatorClient) WaitConverged(ctx context.Context, opts WaitOptions) (engine.Outcome, *engine.Summary, error) {
	return waitConverged(ctx, c, opts)
}

func waitConverged(ctx context.Context, c summaryPoller, opts WaitOptions) (engine.Outcome, *engine.Summary, error) {
	var last *engine.Summary
	var asked time.Time
	outage := 0 // polls failed in a row, for a control plane between leaders
	for {
		every := paceFor(last)
		if outage > 0 {
			every = waitRetry(outage)
		}
		if !pace(ctx, asked, every) {
			return engine.Waiting, last, ctx.Err()
		}
		asked = time.Now()
		sum, err := c.WaitSummary(ctx, false, last, 10*time.Second)
		if err != nil {
			if ctx.Err() != nil {
				return engine.Waiting, last, ctx.Err()
			}
			if !transient(err, last != nil) {
				return engine.Waiting, last, err
			}
			if outage++; outage == 1 && opts.Outage != nil {
				opts.Outage(err)
			}
			continue
		}
		outage = 0
		last = sum
		if opts.Progress != nil {
			opts.Progress(sum)
		}
		if o := sum.Outcome(opts.KeepGoing); o != engine.Waiting {
			return o, sum, nil
		}
	}
}

// Follow reads the status summary at every change of the state after
// last (nil: from now) and gives it to seen with the one before (last at
// first), until ctx ends; stale reads the contacted node's copy. A poll
// that fails is tried again a second later: the node may be going away,
// and a follower of the status outlives it.
func (c *OperatorClient) Follow(ctx context.Context, stale bool, last *engine.Summary, seen func(prev, sum *engine.Summary)) {
	follow(ctx, c, stale, last, seen)
}

func follow(ctx context.Context, c summaryPoller, stale bool, last *engine.Summary, seen func(prev, sum *engine.Summary)) {
	var asked time.Time
	for pace(ctx, asked, paceFor(last)) {
		asked = time.Now()
		sum, err := c.WaitSummary(ctx, stale, last, 30*time.Second)
		if err != nil {
			backoff.Sleep(ctx, time.Second)
			continue
		}
		seen(last, sum)
		last = sum
	}
}

// transient reports whether a failed poll may succeed later with nothing
// done by the operator: the control plane answered that it has no leader
// or cannot serve now (an election, a node restarting), or, once it has
// answered before (seen), no node answered at all. A wrong address, token
// or request still fails at once.
func transient(err error, seen bool) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind.Retryable()
	}
	var ue *url.Error
	return seen && errors.As(err, &ue)
}

// waitRetry spaces a waiter's polls while the control plane cannot answer,
// doubling from a fraction of a second to a few seconds.
var waitRetry = backoff.Policy{Min: 200 * time.Millisecond, Max: 5 * time.Second, Jitter: 0.5}.Delay

// statusPace spaces a waiter's polls. Every hand-out and every result
// moves the status generation, and each answer is computed under the
// controller's lock, which the hand-outs wait for; ten answers a second
// are plenty to watch, and nothing is missed in between: the next poll
// passes the generation it last saw.
const statusPace = 100 * time.Millisecond

// paceFor is the pace after the summary last: statusPace per 10,000 units.
// The summary is computed by one walk of the units, which grows with the
// environment, so a waiter on a large environment asks less often rather
// than spend a core of the leader on being told.
func paceFor(last *engine.Summary) time.Duration {
	if last == nil {
		return statusPace
	}
	return statusPace * time.Duration(max(1, last.Phases.Units/10_000))
}

// pace waits until every after the last poll was sent (asked); false if
// ctx ended first.
func pace(ctx context.Context, asked time.Time, every time.Duration) bool {
	return backoff.Sleep(ctx, time.Until(asked.Add(every)))
}
