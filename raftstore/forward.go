package raftstore

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/model/backoff"
	"github.com/fixpoint/fixpoint/model/fault"
)

// retryable reports whether err may go away by trying again, possibly at
// another node: no or another leader, leadership lost mid-commit (the
// command carries a request id, so a retry applies at most once), a node
// that did not answer.
func retryable(err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, ErrRefused), errors.Is(err, ErrClosed),
		errors.Is(err, raft.ErrRaftShutdown),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	case errors.As(err, new(*haltError)), errors.Is(err, ErrNoLeader), errors.Is(err, raft.ErrNotLeader),
		errors.Is(err, raft.ErrLeadershipLost), errors.Is(err, raft.ErrLeadershipTransferInProgress),
		errors.Is(err, raft.ErrEnqueueTimeout), errors.Is(err, raft.ErrAbortedByRestore),
		errors.Is(err, raft.ErrNotVoter):
		return true
	}
	var fe *fault.Error
	if errors.As(err, &fe) {
		return fe.Kind.Retryable()
	}
	// The other node did not answer: it may be down, or no longer lead.
	var ue *url.Error
	return errors.As(err, &ue)
}

// definite reports whether err guarantees the entry was not appended, so
// that even an entry without a request id may be proposed again.
func definite(err error) bool {
	switch {
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrEnqueueTimeout), errors.Is(err, ErrNoLeader):
		return true
	}
	// A connection that was never made carried nothing.
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return true
	}
	// A node that does not lead proposed nothing.
	return errors.Is(err, ErrNotLeader)
}

// leaderWait spaces retries while there is no leader, as Consul does:
// short at first, so that an election that is about to finish costs little.
var leaderWait = backoff.Policy{Min: 20 * time.Millisecond, Max: time.Second, Jitter: 0.5}

// retrier counts a retry loop's attempts.
type retrier struct{ attempt int }

// wait sleeps for the next interval; it reports false when ctx or the store
// ended first.
func (r *retrier) wait(ctx context.Context, s *Store) bool {
	r.attempt++
	t := time.NewTimer(leaderWait.Delay(r.attempt))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.ctx.Done():
		return false
	}
}

// leaderHold bounds how long a request waits while its node knows no
// leader, as Consul's RPCHoldTimeout (7 s) does. An election takes a second
// or two; a node that stays leaderless longer is most likely cut off from a
// quorum, and its caller should hear so rather than wait for its own
// deadline, which a CLI does not even set.
const leaderHold = 7 * time.Second

// tried remembers the leaders a retry loop attempted, in order, for the
// error message, and how long it has gone without a leader.
type tried struct {
	seen map[string]bool
	list []string
	last error
	// leaderless is when the current run of ErrNoLeader answers began.
	leaderless time.Time
}

// gaveUp reports whether the retry loop should stop because err, and the
// errors before it, said there is no leader for longer than hold. It
// returns the reason to wrap into the final error.
func (t *tried) gaveUp(err error, hold time.Duration) error {
	if !errors.Is(err, ErrNoLeader) {
		t.leaderless = time.Time{}
		return nil
	}
	if t.leaderless.IsZero() {
		t.leaderless = time.Now()
	}
	if d := time.Since(t.leaderless); d >= hold {
		return fmt.Errorf("gave up after %s without a leader (is this node cut off from a majority of the cluster?)", d.Round(100*time.Millisecond))
	}
	return nil
}

func (t *tried) add(id, addr string, err error) {
	t.last = err
	key := id + " at " + addr
	if addr == "" {
		key = id + " (no HTTP address registered)"
	}
	if t.seen == nil {
		t.seen = map[string]bool{}
	}
	if !t.seen[key] {
		t.seen[key] = true
		t.list = append(t.list, key)
	}
}

// attempt runs one try of op against the leader: locally when this node
// leads, else through remote with the leader's HTTP address.
func (s *Store) attempt(t *tried, local func() error, remote func(addr string) error) error {
	if s.closed() {
		return ErrClosed
	}
	if s.IsLeader() {
		err := local()
		if err != nil {
			t.add(s.cfg.NodeID+" (this node)", s.cfg.HTTPAddr, err)
		}
		return err
	}
	id, addr := s.leader()
	var err error
	switch {
	case id == "":
		err = fmt.Errorf("%w known to node %s", ErrNoLeader, s.cfg.NodeID)
		t.last = err
		return err
	case addr == "":
		err = fmt.Errorf("%w: leader %s has no HTTP address registered yet", ErrNoLeader, id)
	default:
		err = remote(addr)
	}
	if err != nil {
		t.add(id, addr, err)
	}
	return err
}

// hold is how long retry loops wait without a leader.
func (s *Store) hold() time.Duration {
	if s.cfg.leaderHold > 0 {
		return s.cfg.leaderHold
	}
	return leaderHold
}

// noLeaderError says which leaders were tried before ctx ended (ctxErr),
// or before the loop gave up waiting for one.
func (s *Store) noLeaderError(what string, t *tried, ctxErr error) error {
	if ctxErr == nil {
		ctxErr = ErrClosed
	}
	if len(t.list) == 0 {
		return fmt.Errorf("%s: %w reachable from node %s: no node claimed leadership (members: %s): %w",
			what, ErrNoLeader, s.cfg.NodeID, s.memberList(), ctxErr)
	}
	return fmt.Errorf("%s: %w reachable from node %s (tried %s; last error: %v): %w",
		what, ErrNoLeader, s.cfg.NodeID, strings.Join(t.list, ", "), t.last, ctxErr)
}

// memberList names the servers this node knows, for error messages.
func (s *Store) memberList() string {
	f := s.raft.GetConfiguration()
	if f.Error() != nil {
		return "unknown"
	}
	var names []string
	for _, srv := range f.Configuration().Servers {
		names = append(names, fmt.Sprintf("%s at %s", srv.ID, srv.Address))
	}
	if len(names) == 0 {
		return "none known"
	}
	return strings.Join(names, ", ")
}

// newRequestID returns a random request id.
func newRequestID() string {
	var b [16]byte
	_, _ = cryptorand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// await waits for a raft future, or for ctx or the store to end. Raft
// futures can not be cancelled; an abandoned one completes on its own when
// the entry commits, leadership moves or raft shuts down.
func (s *Store) await(ctx context.Context, f raft.Future) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-s.ctx.Done():
		return ErrClosed
	}
}
