package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// ErrStaleReport means the report is for a universe this controller no
// longer knows; the unit will simply be handed out again.
var ErrStaleReport = errors.New("report for a universe that is no longer current")

// accept turns reports from machine's agent into one replicated command
// (Controller.Accept), recording each run in hist. A report is checked
// against the universe its claim holds; one without its claim (handed out
// before a leader change, or dropped meanwhile) is skipped, and the unit
// simply runs again: the controller keeps no universe beyond the claims,
// so that memory follows the hooks in flight.
func (h *handout) accept(ctx context.Context, hist *History, machine string, reports []wire.Report) (*model.Response, error) {
	if len(reports) == 0 {
		return &model.Response{}, nil
	}
	now := h.opts.Now()
	h.contacts.Heard(machine, now)
	results, stale, w := h.ledger.Accept(machine, reports, now)
	h.apply(w)
	hist.record(h.store, machine, reports, results, now)
	if len(results) == 0 {
		return &model.Response{Skipped: stale}, nil
	}
	sealResults(h.store, results)
	resp, err := h.store.Apply(ctx, &model.Command{Op: model.OpResults, Time: now.UnixNano(), Results: results})
	if err != nil {
		return nil, fmt.Errorf("apply %d results: %w", len(results), err)
	}
	// Catch the views up before closing the claims, so the units do not
	// look stale against the universe they just reconciled.
	if err := h.refresh(); err != nil {
		return nil, err
	}
	h.apply(h.ledger.CloseReported(results))
	for _, u := range stale {
		resp.Skipped = append(resp.Skipped, u+": universe moved on; it will run again")
	}
	return resp, nil
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
