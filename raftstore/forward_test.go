package raftstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
	"github.com/fixpoint/fixpoint/raftstore/forward"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// TestFollowerWritesReuseConnections holds the forwarding client to its
// pool: writes a follower forwards to the leader ride the connections it
// already has. With Go's default of two idle connections per host, 1,000
// writes from 64 writers opened over a hundred new connections to the
// leader, a write's worth of handshake and a socket in TIME-WAIT each.
func TestFollowerWritesReuseConnections(t *testing.T) {
	log := testLogger(t)
	var conns atomic.Int64
	counting := func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	n1, n2, n3 := newNode(t, log, "n1"), newNode(t, log, "n2"), newNode(t, log, "n3")
	for _, n := range []*node{n1, n2, n3} {
		n.connState = counting
	}
	n1.start(true, nil)
	settled(t, n1)
	n2.start(false, []string{n1.httpAddr})
	n3.start(false, []string{n1.httpAddr})
	nodes := []*node{n1, n2, n3}
	rafttest.Eventually(t, time.Minute, "three voters", func() error { return voters(nodes, 3) })
	leader := waitLeader(t, nodes...)
	follower := others(nodes, leader)[0]
	ctx := ctxT(t, 2*time.Minute)

	const writers, writes = 64, 1000
	write := func(i int) error {
		_, err := follower.s.Apply(ctx, machineCmd(fmt.Sprintf("m%d", i%8), fmt.Sprintf("10.0.0.%d", i%250)))
		return err
	}
	// burst has writers write n commands between them, one after
	// another each.
	burst := func(n int) {
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := int(next.Add(1)); i <= n; i = int(next.Add(1)) {
					if err := write(i); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	// Warm the pool: it grows to one connection per writer.
	burst(2 * writers)
	before := conns.Load()
	burst(writes)
	if l, _ := leaderOf(nodes...); l != leader {
		t.Skip("leadership moved during the writes; the count would include new connections to the new leader")
	}
	opened := conns.Load() - before
	t.Logf("%d forwarded writes from %d writers opened %d new connections", writes, writers, opened)
	// The pool holds a connection for every writer; the nodes' own
	// traffic (status, announcements) may add a few.
	if opened > writers/4 {
		t.Fatalf("%d writes from %d writers opened %d new connections: the forwarding client does not reuse its connections", writes, writers, opened)
	}
}

// TestRefusalIsOneErrorOnEveryHop: a command the model refuses is
// ErrRefused with the model's problems whether it was proposed on the
// leader or forwarded by a follower, and a 409 refused on the wire.
func TestRefusalIsOneErrorOnEveryHop(t *testing.T) {
	log := testLogger(t)
	n1, n2 := newNode(t, log, "n1"), newNode(t, log, "n2")
	n1.start(true, nil)
	settled(t, n1)
	n2.start(false, []string{n1.httpAddr})
	nodes := []*node{n1, n2}
	rafttest.Eventually(t, time.Minute, "two voters", func() error { return voters(nodes, 2) })
	ctx := ctxT(t, time.Minute)
	// A deploy of a version this model does not understand: refused, with
	// the problem's path.
	bad := deployCmd()
	bad.Deploy.Env.APIVersion = "fixpoint/v0"
	for _, n := range nodes {
		_, err := n.s.Apply(ctx, bad)
		if !errors.Is(err, ErrRefused) || !errors.Is(err, fault.ErrRefused) {
			t.Fatalf("via %s: got %v, want a refusal", n.id, err)
		}
		var ps model.Problems
		if !errors.As(err, &ps) || len(ps) == 0 {
			t.Errorf("via %s: the refusal lost the model's problems: %v", n.id, err)
		}
	}
	// On the wire, to the leader as another node would forward it.
	leader := waitLeader(t, nodes...)
	c := forward.NewClient(&http.Client{Transport: forward.NewTransport(nil)}, "test")
	bad.RequestID = ""
	body, err := json.Marshal(bad)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Forward(ctx, "POST", leader.httpAddr, "/v1/raft/apply", body, nil)
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Status != http.StatusConflict || fe.Kind != fault.KindRefused || len(fe.Problems) == 0 {
		t.Fatalf("got %v (%+v), want a 409 refused envelope", err, fe)
	}
	// A follower asked by another node does not forward again.
	follower := others(nodes, leader)[0]
	err = c.Forward(ctx, "POST", follower.httpAddr, "/v1/raft/apply", body, nil)
	if !errors.Is(err, fault.ErrNotLeader) || !errors.As(err, &fe) || fe.Leader != leader.httpAddr {
		t.Fatalf("got %v, want not_leader naming the leader %s", err, leader.httpAddr)
	}
}
