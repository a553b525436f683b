package engine

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/fixpoint/fixpoint/model"
)

// The secrets' schedule (rotation, revision expiry) lives in the state;
// the leader's engine is its clock. WatchSecrets scans the schedule when
// entries land and when the next occurrence is due, and proposes the due
// ones (model.OpSecretDue) with its time. It holds no state of its own
// but when it last scanned: a new leader scans the replicated state and
// finds every due occurrence its predecessor had not recorded, and the
// model refuses an occurrence recorded already, so none fires twice.
// It takes only the store's lock, through View and Apply.

// secretDueGrain is the least time between two scans of the schedule: a
// stream of entries rescans it at this rate, not at theirs.
const secretDueGrain = time.Second

// secretDueIdle bounds how long the watch waits with nothing due: a clock
// that jumps is noticed within it.
const secretDueIdle = time.Minute

// secretsDue returns the occurrences due at now in st, at most
// model.MaxSecretDue of them (nil: none), and when the earliest one not
// due yet comes (zero: none, or some left over for the next command).
func secretsDue(st *model.State, now time.Time) (*model.SecretDue, time.Time) {
	at := now.UnixNano()
	due := &model.SecretDue{}
	var next int64
	soonest := func(t int64) {
		if t != 0 && (next == 0 || t < next) {
			next = t
		}
	}
	for id, s := range st.Secrets {
		if !s.Scheduled() {
			continue
		}
		if t := s.NextRotate; t != 0 && t <= at {
			due.Rotate = append(due.Rotate, id)
		} else {
			soonest(t)
		}
		for i := range s.Revisions {
			r := &s.Revisions[i]
			if t := r.DueAt(); t != 0 && t <= at {
				due.Expire = append(due.Expire, model.SecretRevisionRef{ID: id, Rev: r.Rev})
			} else {
				soonest(t)
			}
		}
	}
	if len(due.Rotate)+len(due.Expire) == 0 {
		if next == 0 {
			return nil, time.Time{}
		}
		return nil, time.Unix(0, next)
	}
	slices.Sort(due.Rotate)
	slices.SortFunc(due.Expire, func(a, b model.SecretRevisionRef) int {
		if c := strings.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return a.Rev - b.Rev
	})
	if over := len(due.Rotate) + len(due.Expire) - model.MaxSecretDue; over > 0 {
		// The rest are due already: the next scan proposes them.
		if n := len(due.Expire) - over; n >= 0 {
			due.Expire = due.Expire[:n]
		} else {
			due.Expire, due.Rotate = nil, due.Rotate[:model.MaxSecretDue]
		}
		return due, now
	}
	if next == 0 {
		return due, time.Time{}
	}
	return due, time.Unix(0, next)
}

// secretsDueStep scans the schedule at opts' now, proposes what is due,
// and returns how long to wait for the next scan.
func secretsDueStep(ctx context.Context, store Store, opts *Options) time.Duration {
	now := opts.Now()
	var due *model.SecretDue
	var next time.Time
	_ = store.View(func(st *model.State) error {
		due, next = secretsDue(st, now)
		return nil
	})
	if due != nil {
		resp, err := store.Apply(ctx, &model.Command{Op: model.OpSecretDue, Time: now.UnixNano(), SecretDue: due})
		switch {
		case err != nil && ctx.Err() == nil:
			opts.Log.Warn("record secrets due", "error", err)
		case err == nil && len(resp.Skipped) > 0:
			opts.Log.Debug("secrets no longer due", "skipped", resp.Skipped)
		}
		return secretDueGrain
	}
	if next.IsZero() {
		return secretDueIdle
	}
	return min(max(next.Sub(now), 0), secretDueIdle)
}

// watchSecrets records secrets' rotations and expiries as they come due,
// while this node leads (isLeader), until ctx ends
// (Controller.WatchSecrets).
func watchSecrets(ctx context.Context, store Store, opts *Options, isLeader func() bool) {
	for {
		wait := secretDueGrain
		if isLeader() {
			wait = secretsDueStep(ctx, store, opts)
		}
		at := store.Index()
		wctx, cancel := context.WithTimeout(ctx, wait)
		_, _, _ = store.WaitIndex(wctx, at)
		cancel()
		// Entries that land in a burst are scanned once, a grain on.
		select {
		case <-ctx.Done():
			return
		case <-time.After(secretDueGrain):
		}
	}
}
