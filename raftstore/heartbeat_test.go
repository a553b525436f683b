package raftstore

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// A leader of term T that a heartbeat of term T+1 reaches (a paused
// leader waking up to the heartbeats of the leader elected meanwhile)
// must not write entries of term T+1: only the leader of T+1 does, and
// an entry with the same index and term as that leader's is never
// replaced. raft answers heartbeats on the connection's goroutine, where
// the newer term made the node a follower of T+1 while its leader loop,
// waiting for proposals, still dispatched the next one and stamped it
// with T+1 (hashicorp/raft#695; the chaos bench found two nodes holding
// different entries 849 of term 11). Here the heartbeat comes from a
// peer with a server certificate of the cluster's CA that never appends
// anything, so any entry of term T+1 in the node's log is a forged one.
func TestHeartbeatOfNewerTermForgesNoEntry(t *testing.T) {
	ca, caKey := operatorCA(t)
	n1 := newNode(t, testLogger(t), "n1")
	speakRaftAs(t, n1, ca, caKey)
	n1.start(true, nil)
	settled(t, n1)
	peer := peerTransport(t, pair(t, ca, caKey, RoleServer, "n9"), ca)
	data, err := encodeEntry(entryCommand, machineCmd("m1", "10.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		r := n1.s.raft
		rafttest.Eventually(t, time.Minute, "n1 leads", func() error {
			if r.State() != raft.Leader {
				return fmt.Errorf("n1 is %s", r.State())
			}
			return r.Barrier(10 * time.Second).Error()
		})
		term := r.CurrentTerm()
		hb := &raft.AppendEntriesRequest{
			RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("n9"), Addr: []byte(peer.LocalAddr())},
			Term:      term + 1,
		}
		var resp raft.AppendEntriesResponse
		if err := peer.AppendEntries("n1", raft.ServerAddress(n1.raftAddr), hb, &resp); err != nil {
			t.Fatalf("round %d: heartbeat: %v", round, err)
		}
		// A proposal that reaches the leader loop after the heartbeat
		// was answered: the node no longer leads term T and never led
		// T+1, so it must not append it.
		f := r.Apply(data, 10*time.Second)
		_ = f.Error()
		if l := forged(t, n1, term+1); l != nil {
			t.Fatalf("round %d: n1 led term %d and appended entry %d of term %d (%v), a term it never led", round, term, l.Index, l.Term, l.Type)
		}
		// The node elects itself again, in a later term: the entry, had
		// it been written, would now be committed and applied.
		rafttest.Eventually(t, time.Minute, "n1 leads again", func() error {
			if r.State() != raft.Leader || r.CurrentTerm() <= term+1 {
				return fmt.Errorf("n1 is %s in term %d", r.State(), r.CurrentTerm())
			}
			return nil
		})
		if l := forged(t, n1, term+1); l != nil {
			t.Fatalf("round %d: n1 holds entry %d of term %d, which no leader wrote", round, l.Index, l.Term)
		}
	}
}

// forged returns an entry of term in n's log, if any.
func forged(t *testing.T, n *node, term uint64) *raft.Log {
	t.Helper()
	first, _ := n.s.logs.FirstIndex()
	last, _ := n.s.logs.LastIndex()
	for i := first; i <= last && i > 0; i++ {
		var l raft.Log
		if err := n.s.logs.GetLog(i, &l); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if l.Term == term {
			return &l
		}
	}
	return nil
}

// The fast path keeps the heartbeats that change nothing: those of the
// term a follower is in. A newer term, or a node that does not follow,
// goes to the main loop.
func TestHeartbeatFastPathOnlyInFollowersTerm(t *testing.T) {
	ca, caKey, f, l := operatorCluster2(t)
	hb := func(term uint64) raft.RPC {
		return raft.RPC{Command: &raft.AppendEntriesRequest{Term: term}}
	}
	g := guardTerms(peerTransport(t, pair(t, ca, caKey, RoleServer, "n9"), ca))
	t.Cleanup(func() { g.Close() })
	if g.mayTakeFastPath(hb(1)) {
		t.Error("the fast path took a heartbeat before the node was known")
	}
	for _, c := range []struct {
		n    *node
		term func(uint64) uint64
		want bool
	}{
		{f, func(t uint64) uint64 { return t }, true},
		{f, func(t uint64) uint64 { return t + 1 }, false},
		{f, func(t uint64) uint64 { return t - 1 }, false},
		{l, func(t uint64) uint64 { return t }, false},
		{l, func(t uint64) uint64 { return t + 1 }, false},
	} {
		g.setNode(c.n.s.raft)
		cur := c.n.s.raft.CurrentTerm()
		if got := g.mayTakeFastPath(hb(c.term(cur))); got != c.want {
			t.Errorf("%s (%s, term %d), heartbeat of term %d: fast path %v, want %v", c.n.id, c.n.s.raft.State(), cur, c.term(cur), got, c.want)
		}
	}
}

// A heartbeat on the fast path writes the node's term to the stable
// store, which the store closes right after raft's shutdown: the guard's
// Close, which raft's shutdown calls last, waits for a fast-path
// heartbeat in flight, and every heartbeat after it is refused.
func TestHeartbeatFastPathEndsBeforeClose(t *testing.T) {
	ca, caKey, f, _ := operatorCluster2(t)
	g := guardTerms(peerTransport(t, pair(t, ca, caKey, RoleServer, "n9"), ca))
	t.Cleanup(func() { g.Close() })
	g.setNode(f.s.raft)

	var closeReturned, ranAfterClose atomic.Bool
	var fastRuns atomic.Int32
	entered, release := make(chan struct{}), make(chan struct{})
	g.SetHeartbeatHandler(func(rpc raft.RPC) {
		if fastRuns.Add(1) == 1 {
			close(entered)
			<-release
		}
		ranAfterClose.Store(closeReturned.Load())
		rpc.Respond(&raft.AppendEntriesResponse{}, nil)
	})
	hb := func(resp chan raft.RPCResponse) raft.RPC {
		return raft.RPC{
			Command:  &raft.AppendEntriesRequest{Term: f.s.raft.CurrentTerm()},
			RespChan: resp,
		}
	}
	// Heartbeats the fast path refuses (the term moved on meanwhile) go
	// to the main loop; here nothing else consumes them.
	go func() {
		for rpc := range g.Consumer() {
			rpc.Respond(nil, raft.ErrTransportShutdown)
		}
	}()
	go func() {
		for fastRuns.Load() == 0 {
			g.heartbeat(hb(make(chan raft.RPCResponse, 1)))
		}
	}()
	<-entered
	closed := make(chan struct{})
	go func() {
		g.Close()
		closeReturned.Store(true)
		close(closed)
	}()
	close(release)
	<-closed
	if ranAfterClose.Load() {
		t.Fatal("a fast-path heartbeat was still running when Close returned")
	}
	runs := fastRuns.Load()
	resp := make(chan raft.RPCResponse, 1)
	g.heartbeat(hb(resp))
	if got := fastRuns.Load(); got != runs {
		t.Fatalf("the fast path took a heartbeat after Close (%d runs, were %d)", got, runs)
	}
	if resp := <-resp; !errors.Is(resp.Error, raft.ErrTransportShutdown) {
		t.Fatalf("heartbeat after Close answered %v, want %v", resp.Error, raft.ErrTransportShutdown)
	}
}
