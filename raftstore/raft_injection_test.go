package raftstore

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// injectAppend sends one AppendEntries to target over trans, as a leader
// of the target's current term would, carrying a command that registers
// machine "evil": with an unauthenticated transport a follower appended
// and kept it. It returns the entry's data and the transport's error.
func injectAppend(t *testing.T, trans raft.Transport, target *node) ([]byte, raft.AppendEntriesResponse, error) {
	t.Helper()
	evil, err := encodeEntry(entryCommand, machineCmd("evil", "6.6.6.6"))
	if err != nil {
		t.Fatal(err)
	}
	last, err := target.s.logs.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	var prev raft.Log
	if err := target.s.logs.GetLog(last, &prev); err != nil {
		t.Fatal(err)
	}
	term := target.s.raft.CurrentTerm()
	req := &raft.AppendEntriesRequest{
		RPCHeader:         raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("attacker"), Addr: []byte(trans.LocalAddr())},
		Term:              term,
		PrevLogEntry:      last,
		PrevLogTerm:       prev.Term,
		Entries:           []*raft.Log{{Index: last + 1, Term: term, Type: raft.LogCommand, Data: evil}},
		LeaderCommitIndex: last + 1,
	}
	var resp raft.AppendEntriesResponse
	err = trans.AppendEntries("attacker", raft.ServerAddress(target.raftAddr), req, &resp)
	return evil, resp, err
}

// logHolds reports whether any entry of n's log carries data.
func logHolds(t *testing.T, n *node, data []byte) bool {
	t.Helper()
	first, _ := n.s.logs.FirstIndex()
	last, _ := n.s.logs.LastIndex()
	for i := first; i <= last && i > 0; i++ {
		var l raft.Log
		if n.s.logs.GetLog(i, &l) == nil && bytes.Equal(l.Data, data) {
			return true
		}
	}
	return false
}

// In the default mode one AppendEntries from anyone who could reach the
// Raft port was appended and kept by a follower. Here an attacker speaks
// hashicorp/raft's own plain TCP transport to a follower of a cluster
// started without any TLS material: the handshake refuses it and the
// follower's log and state do not change.
func TestPlaintextRaftInjectionRefused(t *testing.T) {
	log := testLogger(t)
	n1, n2, n3 := newNode(t, log, "n1"), newNode(t, log, "n2"), newNode(t, log, "n3")
	n1.start(true, nil)
	settled(t, n1)
	n2.start(false, []string{n1.httpAddr})
	n3.start(false, []string{n1.httpAddr})
	l := waitLeader(t, n1, n2, n3)
	if _, err := l.s.Apply(ctxT(t, 30*time.Second), machineCmd("m1", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	rafttest.Eventually(t, time.Minute, "converged", func() error { return converged(t, n1, n2, n3) })
	f := n2
	if f == l {
		f = n3
	}

	attacker, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, 5*time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer attacker.Close()
	evil, resp, err := injectAppend(t, attacker, f)
	if err == nil {
		t.Errorf("the follower answered a plaintext AppendEntries (success=%v)", resp.Success)
	}
	if logHolds(t, f, evil) {
		t.Fatalf("the follower appended the injected entry")
	}
	if _, ok := machines(f.s)["evil"]; ok {
		t.Fatalf("the injected machine is in the follower's state")
	}
}
