package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// ErrStaleReport means the report is for a universe this controller no
// longer knows; the unit will simply be handed out again.
var ErrStaleReport = errors.New("report for a universe that is no longer current")

// Accept turns reports from machine's agent into one replicated command.
// A report is checked against the universe its claim holds; one without
// its claim (handed out before a leader change, or dropped meanwhile) is
// skipped, and the unit simply runs again: the controller keeps no
// universe beyond the claims, so that memory follows the hooks in flight.
func (c *Controller) Accept(ctx context.Context, machine string, reports []wire.Report) (*model.Response, error) {
	if len(reports) == 0 {
		return &model.Response{}, nil
	}
	now := c.opts.Now()
	results, stale := c.disp.accept(machine, reports, now)
	c.stat.hist.record(c.store, machine, reports, results, now)
	if len(results) == 0 {
		return &model.Response{Skipped: stale}, nil
	}
	sealResults(c.store, results)
	resp, err := c.store.Apply(ctx, &model.Command{Op: model.OpResults, Time: now.UnixNano(), Results: results})
	if err != nil {
		return nil, fmt.Errorf("apply %d results: %w", len(results), err)
	}
	// Catch the views up before dropping the claims, so the units do
	// not look stale against the universe they just reconciled.
	if err := c.Refresh(); err != nil {
		return nil, err
	}
	c.disp.settle(results)
	for _, u := range stale {
		resp.Skipped = append(resp.Skipped, u+": universe moved on; it will run again")
	}
	return resp, nil
}

// accept checks machine's reports against their claims and returns the
// results of those that match, and the units of those that do not. A
// failed result is queued for its retry.
func (d *dispatch) accept(machine string, reports []wire.Report, now time.Time) (results []model.Result, stale []string) {
	d.lock()
	defer d.unlock()
	d.agents.heard(machine, now)
	for _, rep := range reports {
		cl := d.claims[rep.Unit]
		if cl == nil || cl.hash != rep.Hash || cl.machine != machine {
			stale = append(stale, rep.Unit)
			continue
		}
		res := ResultOf(cl.uni, cl.hash, cl.seen, rep.Output, rep.Error, d.stale.lastOf(rep.Unit))
		res.Timer = cl.timer
		if rep.Duration > 0 {
			res.Started = now.Add(-rep.Duration).UnixNano()
		}
		d.noteRan(rep.Unit, machine, now)
		if res.Error != "" {
			res.RetryAt = d.queue.AddRateLimited(rep.Unit, max(cl.uni.Attempt, 1), now).UnixNano()
		}
		results = append(results, *res)
	}
	return results, stale
}

// settle drops the claims results answer, once the views hold them.
func (d *dispatch) settle(results []model.Result) {
	d.lock()
	defer d.unlock()
	for _, r := range results {
		if cl := d.claims[r.Unit]; cl != nil && cl.hash == r.Hash {
			delete(d.claims, r.Unit)
			d.claimEnded(r.Unit, cl.machine)
			if r.Error == "" && schedule.KeepLast(d.runs[r.Unit]) {
				d.stale.keepLast(r.Unit, cl.uni)
			}
		}
	}
	// The claims held their wave: the units queued behind it may run.
	d.wakeQueued()
	// Reconciling to settled, after the refresh's notify and with no new
	// entry: status long polls must hear of it too.
	d.stat.changed.note()
}

// ResultOf turns one hook run on uni (the universe of hash, whose
// reconcile leaves seen behind) into a model.Result: the hook's output,
// checked against uni, or the hook's error (hookErr) or the output's. A
// failed result has no retry time; the caller's clock sets it. last, the
// universe the unit reconciled before, names the keys that changed since,
// which the state counts towards divergence.
func ResultOf(uni *charmapi.Universe, hash string, seen *model.Seen, output []byte, hookErr string, last *charmapi.Universe) *model.Result {
	if hookErr != "" {
		return &model.Result{Unit: uni.Unit, Hash: hash, Seen: seen, Error: hookErr}
	}
	res, err := DecodeResult(uni, output)
	if err != nil {
		return &model.Result{Unit: uni.Unit, Hash: hash, Seen: seen, Error: err.Error()}
	}
	res.Hash, res.Seen = hash, seen
	if last != nil {
		for _, ch := range Diff(last, uni) {
			key := ch.Key
			if ch.Writer != "" {
				key += " (written by " + ch.Writer + ")"
			}
			res.Churn = append(res.Churn, key)
		}
	}
	return res
}
