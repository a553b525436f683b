package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/model/backoff"
	"github.com/fixpoint/fixpoint/raftstore"
)

// What a node brings to the cluster when it starts — the bootstrap
// node's credentials, the --max-* limits its flags give — is recorded
// once the node's state has caught up with the log (a linearizable read):
// before that, a restarted node's state is not yet replayed and would
// show none of what the log already holds. A cluster that is slow to
// answer (no leader yet, a leader whose address is not known yet) is
// waited for, retrying with backoff for as long as the node runs: a node
// never exits because the cluster is slow. What it still waits for is in
// its health answers (api.Health.Waiting).

// recordPolicy spaces the attempts: the first retries soon, a cluster
// that stays away is asked every half minute at most.
var recordPolicy = backoff.Policy{Min: 500 * time.Millisecond, Max: 30 * time.Second, Jitter: 0.3}

// recordAttempt bounds one attempt: a linearizable read and a proposal.
const recordAttempt = 20 * time.Second

// startRecords is a node's start-up records and what they wait for.
type startRecords struct {
	store  *raftstore.Store
	creds  *credentials
	limits *limitFlags
	log    hclog.Logger

	mu      sync.Mutex
	waiting string
	done    chan struct{}
}

func newStartRecords(store *raftstore.Store, cfg nodeConfig) *startRecords {
	r := &startRecords{store: store, creds: cfg.creds, limits: cfg.limits, log: cfg.log, done: make(chan struct{})}
	if r.creds == nil && r.limits == nil {
		close(r.done)
	} else {
		r.waiting = "recording this node's start-up settings"
	}
	return r
}

// Waiting says what the node still waits for, "" once nothing.
func (r *startRecords) Waiting() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waiting
}

// Done is closed once the records are made, or failed for good.
func (r *startRecords) Done() <-chan struct{} { return r.done }

func (r *startRecords) set(waiting string) {
	r.mu.Lock()
	r.waiting = waiting
	r.mu.Unlock()
}

// first makes one attempt, within first's bound; it reports whether the
// records are settled (made, or failed for good).
func (r *startRecords) first(ctx context.Context, bound time.Duration) bool {
	if r.settled() {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	return r.attempt(ctx, 1)
}

// run retries until the records are settled or ctx ends.
func (r *startRecords) run(ctx context.Context) {
	for n := 2; !r.settled(); n++ {
		if !backoff.Sleep(ctx, recordPolicy.Delay(n-1)) {
			return
		}
		actx, cancel := context.WithTimeout(ctx, recordAttempt)
		r.attempt(actx, n)
		cancel()
	}
}

func (r *startRecords) settled() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// attempt is attempt number n: wait for the log to be replayed, then
// record. It reports whether the records are settled.
func (r *startRecords) attempt(ctx context.Context, n int) bool {
	err := r.record(ctx)
	switch {
	case err == nil:
		r.set("")
		close(r.done)
		return true
	case errors.Is(err, errCredentialsDiffer), errors.Is(err, raftstore.ErrRefused):
		// No retry changes these: the node serves, and says why its
		// settings are not the cluster's.
		r.set("failed: " + err.Error())
		r.log.Error("start-up settings not recorded", "error", err)
		close(r.done)
		return true
	}
	r.set(fmt.Sprintf("%v (attempt %d; retrying with backoff)", err, n))
	r.log.Warn("start-up settings not recorded yet; retrying", "attempt", n, "error", err)
	return false
}

func (r *startRecords) record(ctx context.Context) error {
	if err := r.store.Linearize(ctx); err != nil {
		return fmt.Errorf("wait for this node's log to be replayed: %w", err)
	}
	if r.creds != nil {
		if err := recordCredentials(ctx, r.store, *r.creds); err != nil {
			return fmt.Errorf("record credentials: %w", err)
		}
	}
	if r.limits != nil {
		if err := recordLimits(ctx, r.store, r.limits, r.creds != nil, r.log); err != nil {
			return err
		}
	}
	return nil
}
