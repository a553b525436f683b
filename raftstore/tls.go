package raftstore

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// identity is what a node proves itself with on Raft and whom it trusts:
// its certificate and the pool of CAs a peer's must chain to.
type identity struct {
	cert tls.Certificate
	pool *x509.CertPool
}

// tlsStream is a raft.StreamLayer over mutual TLS in which both ends must
// hold a certificate of the cluster's CA with the server role: nothing
// outside the cluster, and no agent or client of it, can read or inject
// Raft traffic. Until the node has an identity (a joining node gets its
// certificate through the join) every handshake fails.
type tlsStream struct {
	ln  net.Listener
	id  atomic.Pointer[identity]
	log hclog.Logger
}

// newTLSStream listens on addr; set the identity before peers can talk.
func newTLSStream(addr string, log hclog.Logger) (*tlsStream, error) {
	t := &tlsStream{log: log}
	inner, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	server := &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The chain and the role are checked by verifyPeer, which the
		// standard verification could not do: it knows no roles.
		ClientAuth: tls.RequireAnyClientCert,
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			id := t.id.Load()
			if id == nil {
				return nil, errors.New("this node has no Raft certificate yet")
			}
			remote := hello.Conn.RemoteAddr().String()
			return &tls.Config{
				MinVersion:   tls.VersionTLS12,
				ClientAuth:   tls.RequireAnyClientCert,
				Certificates: []tls.Certificate{id.cert},
				VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
					return t.verifyPeer(raw, id.pool, x509.ExtKeyUsageClientAuth, remote)
				},
			}, nil
		},
	}
	t.ln = tls.NewListener(inner, server)
	return t, nil
}

// setIdentity makes the stream present cert and trust pool from now on.
func (t *tlsStream) setIdentity(id *identity) { t.id.Store(id) }

// verifyPeer checks a peer's certificate and logs a refusal with the
// peer's address: a refused Raft peer is an attack or a misconfiguration,
// and the operator should see which.
func (t *tlsStream) verifyPeer(raw [][]byte, pool *x509.CertPool, usage x509.ExtKeyUsage, remote string) error {
	if _, err := verifyServerPeer(raw, pool, usage); err != nil {
		t.log.Warn("refused a raft peer", "remote", remote, "error", err)
		return fmt.Errorf("raft peer %s refused: %w", remote, err)
	}
	return nil
}

// Accept implements net.Listener.
func (t *tlsStream) Accept() (net.Conn, error) { return t.ln.Accept() }

// Close implements net.Listener.
func (t *tlsStream) Close() error { return t.ln.Close() }

// Addr implements net.Listener.
func (t *tlsStream) Addr() net.Addr { return t.ln.Addr() }

// Dial implements raft.StreamLayer. Peers are checked by CA and role,
// not by host name: a server's Raft address may change across restarts,
// its role does not.
func (t *tlsStream) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	id := t.id.Load()
	if id == nil {
		return nil, fmt.Errorf("dial %s: this node has no Raft certificate yet", address)
	}
	conf := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		Certificates:       []tls.Certificate{id.cert},
		InsecureSkipVerify: true, // verifyPeer checks the chain and the role
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			return t.verifyPeer(raw, id.pool, x509.ExtKeyUsageServerAuth, string(address))
		},
	}
	return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", string(address), conf)
}

// newTransport makes the Raft transport over mutual TLS; every node runs
// it, whether the operator gave TLS material or the cluster made its own.
// Its heartbeats of a newer term reach raft's main loop (termGuard).
func newTransport(addr string, log hclog.Logger) (*termGuard, *tlsStream, error) {
	stream, err := newTLSStream(addr, log)
	if err != nil {
		return nil, nil, err
	}
	return guardTerms(raft.NewNetworkTransportWithLogger(stream, 3, 10*time.Second, log)), stream, nil
}
