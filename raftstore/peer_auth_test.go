package raftstore

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// pair issues a certificate of role from ca as a tls.Certificate.
func pair(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, role, name string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := IssueCert(ca, caKey, &key.PublicKey, role, name, []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}
}

// operatorCA makes a CA as `fixpoint tls init` does.
func operatorCA(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	ca, caKey, err := NewCA("operator CA")
	if err != nil {
		t.Fatal(err)
	}
	return ca, caKey
}

// speakRaftAs gives n a server certificate of ca, named n's id, to speak
// Raft with, trusting ca alone.
func speakRaftAs(t *testing.T, n *node, ca *x509.Certificate, caKey *ecdsa.PrivateKey) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	n.raftTLS = &tls.Config{Certificates: []tls.Certificate{pair(t, ca, caKey, RoleServer, n.id)}, RootCAs: pool}
}

// peerTransport is hashicorp/raft's network transport over this package's
// TLS stream layer, presenting cert: a peer that holds cert as its own.
func peerTransport(t *testing.T, cert tls.Certificate, trust *x509.Certificate) *raft.NetworkTransport {
	t.Helper()
	stream, err := newTLSStream("127.0.0.1:0", testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(trust)
	stream.setIdentity(&identity{cert: cert, pool: pool})
	trans := raft.NewNetworkTransport(stream, 1, 5*time.Second, io.Discard)
	t.Cleanup(func() { trans.Close() })
	return trans
}

// operatorCluster2 starts a leader and a follower that speak Raft with
// server certificates of a new operator CA, and returns the CA and both
// nodes, the follower first.
func operatorCluster2(t *testing.T) (ca *x509.Certificate, caKey *ecdsa.PrivateKey, f, l *node) {
	t.Helper()
	ca, caKey = operatorCA(t)
	log := testLogger(t)
	n1, n2 := newNode(t, log, "n1"), newNode(t, log, "n2")
	speakRaftAs(t, n1, ca, caKey)
	speakRaftAs(t, n2, ca, caKey)
	f, l = cluster2(t, n1, n2), n1
	if f == n1 {
		l = n2
	}
	return ca, caKey, f, l
}

// cluster2 starts a leader and a follower and returns the follower.
func cluster2(t *testing.T, n1, n2 *node) *node {
	t.Helper()
	n1.start(true, nil)
	settled(t, n1)
	n2.start(false, []string{n1.httpAddr})
	l := waitLeader(t, n1, n2)
	if _, err := l.s.Apply(ctxT(t, 30*time.Second), machineCmd("m1", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	rafttest.Eventually(t, time.Minute, "converged", func() error { return converged(t, n1, n2) })
	if l == n1 {
		return n2
	}
	return n1
}

// refused injects an entry with cert and checks that the handshake failed
// and nothing was appended.
func refused(t *testing.T, what string, trans raft.Transport, f *node) {
	t.Helper()
	evil, resp, err := injectAppend(t, trans, f)
	if err == nil {
		t.Errorf("%s: the follower answered (success=%v)", what, resp.Success)
	}
	if logHolds(t, f, evil) {
		t.Fatalf("%s: the follower appended the injected entry", what)
	}
}

// With the operator's TLS material, any certificate of the CA was a Raft
// peer, an agent's too. Now only the server role is: agent and client
// certificates of the same CA, and a server certificate of another CA,
// are refused at the handshake. A server certificate of the CA is
// accepted, which shows the refusals are the role's and the CA's doing.
func TestAgentCertificateRefusedAsRaftPeer(t *testing.T) {
	ca, caKey, f, l := operatorCluster2(t)

	refused(t, "agent certificate", peerTransport(t, pair(t, ca, caKey, RoleAgent, "agent-m1"), ca), f)
	refused(t, "client certificate", peerTransport(t, pair(t, ca, caKey, RoleClient, "ops"), ca), f)
	other, otherKey, err := NewCA("another CA")
	if err != nil {
		t.Fatal(err)
	}
	refused(t, "server certificate of another CA", peerTransport(t, pair(t, other, otherKey, RoleServer, "n9"), ca), f)
	if _, ok := machines(f.s)["evil"]; ok {
		t.Fatalf("the injected machine is in the follower's state")
	}

	// The control: a server certificate of the CA passes the handshake (a
	// heartbeat, which appends nothing).
	trans := peerTransport(t, pair(t, ca, caKey, RoleServer, "n9"), ca)
	last, _ := f.s.logs.LastIndex()
	var prev raft.Log
	if err := f.s.logs.GetLog(last, &prev); err != nil {
		t.Fatal(err)
	}
	req := &raft.AppendEntriesRequest{
		RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("n9"), Addr: []byte(trans.LocalAddr())},
		Term:      f.s.raft.CurrentTerm(), PrevLogEntry: last, PrevLogTerm: prev.Term,
	}
	var resp raft.AppendEntriesResponse
	if err := trans.AppendEntries("n9", raft.ServerAddress(f.raftAddr), req, &resp); err != nil {
		t.Errorf("a server certificate of the cluster's CA was refused: %v", err)
	}

	// A node whose own certificate is an agent's does not start.
	log := testLogger(t)
	n3 := newNode(t, log, "n3")
	_, err = Open(ctxT(t, 10*time.Second), Config{
		NodeID: "n3", DataDir: n3.dir, RaftAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:1", Join: []string{l.httpAddr}, Logger: log,
		RaftTLS: &tls.Config{Certificates: []tls.Certificate{pair(t, ca, caKey, RoleAgent, "n3")}, RootCAs: l.raftTLS.RootCAs},
	})
	if err == nil || !strings.Contains(err.Error(), "can not speak Raft") {
		t.Errorf("open with an agent certificate: err = %v, want it refused", err)
	}

	// A node without TLS material can not get a certificate from a
	// cluster that runs on the operator's: told what to pass instead.
	n4 := newNode(t, log, "n4")
	_, err = Open(ctxT(t, 20*time.Second), Config{
		NodeID: "n4", DataDir: n4.dir, RaftAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:1", Join: []string{l.httpAddr}, Logger: log,
	})
	if err == nil || !strings.Contains(err.Error(), "--tls-cert") {
		t.Errorf("join without TLS material: err = %v, want --tls-cert named", err)
	}
}

// Without TLS material the cluster made its own CA: the joining node got
// its certificate through the join, the keys are private, and an agent
// certificate of that very CA, or a server certificate of another
// cluster's, is refused.
func TestClusterCARefusesNonServerPeers(t *testing.T) {
	log := testLogger(t)
	n1, n2 := newNode(t, log, "n1"), newNode(t, log, "n2")
	f := cluster2(t, n1, n2)
	for _, n := range []*node{n1, n2} {
		dir := filepath.Join(n.dir, tlsDirName)
		for _, name := range []string{caKeyFile, nodeKeyFile} {
			fi, err := os.Stat(filepath.Join(dir, name))
			if err != nil {
				t.Fatalf("%s: %v", n.id, err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: %s is %v, want 0600", n.id, name, fi.Mode().Perm())
			}
		}
	}
	iss, _, err := loadIdentity(filepath.Join(n1.dir, tlsDirName))
	if err != nil || iss == nil {
		t.Fatalf("n1's CA: %v", err)
	}
	_, _, err = loadIdentity(filepath.Join(n2.dir, tlsDirName))
	if err != nil {
		t.Fatalf("n2's identity: %v", err)
	}

	refused(t, "agent certificate of the cluster CA", peerTransport(t, pair(t, iss.ca, iss.key, RoleAgent, "agent-m1"), iss.ca), f)
	other, otherKey, err := NewCA("another cluster")
	if err != nil {
		t.Fatal(err)
	}
	refused(t, "server certificate of another cluster", peerTransport(t, pair(t, other, otherKey, RoleServer, "n1"), iss.ca), f)
	if _, ok := machines(f.s)["evil"]; ok {
		t.Fatalf("the injected machine is in the follower's state")
	}
}

// A one-node cluster whose data dir predates authenticated Raft (as
// `fixpoint up` keeps one) starts again with --bootstrap: it makes its CA
// and keeps its state. A joined node without a certificate is told to
// join again.
func TestDataDirFromBeforeRaftTLS(t *testing.T) {
	log := testLogger(t)
	n1 := newNode(t, log, "n1")
	n1.start(true, nil)
	settled(t, n1)
	if _, err := n1.s.Apply(ctxT(t, 30*time.Second), machineCmd("m1", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	n1.stop()
	if err := os.RemoveAll(filepath.Join(n1.dir, tlsDirName)); err != nil {
		t.Fatal(err)
	}
	n1.start(true, nil)
	settled(t, n1)
	if _, ok := machines(n1.s)["m1"]; !ok {
		t.Fatalf("the state was lost")
	}
	if _, err := os.Stat(filepath.Join(n1.dir, tlsDirName, caKeyFile)); err != nil {
		t.Fatalf("no new CA: %v", err)
	}
	n1.stop()
	if err := os.RemoveAll(filepath.Join(n1.dir, tlsDirName)); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctxT(t, 10*time.Second), Config{NodeID: "n1", DataDir: n1.dir, RaftAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:1", Join: []string{"127.0.0.1:1"}, Logger: log})
	if err == nil || !strings.Contains(err.Error(), "join the node again") {
		t.Errorf("a node with state and no certificate: err = %v, want it told to join again", err)
	}
}
