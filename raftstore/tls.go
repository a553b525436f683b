package raftstore

import (
	"crypto/tls"
	"errors"
	"net"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// tlsStream is a raft.StreamLayer over mutual TLS: every peer proves it
// holds a certificate of the cluster's CA, in both directions, so nothing
// outside the cluster can read or inject Raft traffic.
type tlsStream struct {
	ln     net.Listener
	dialer *tls.Config
}

// newTLSStream listens on addr with server, which must require and verify
// client certificates, and dials peers with the same certificates.
func newTLSStream(addr string, conf *tls.Config) (*tlsStream, error) {
	if conf == nil || len(conf.Certificates) == 0 || conf.RootCAs == nil || conf.ClientCAs == nil {
		return nil, errors.New("raft TLS needs a certificate, root CAs and client CAs")
	}
	server := conf.Clone()
	server.ClientAuth = tls.RequireAndVerifyClientCert
	ln, err := tls.Listen("tcp", addr, server)
	if err != nil {
		return nil, err
	}
	return &tlsStream{ln: ln, dialer: conf.Clone()}, nil
}

// Accept implements net.Listener.
func (t *tlsStream) Accept() (net.Conn, error) { return t.ln.Accept() }

// Close implements net.Listener.
func (t *tlsStream) Close() error { return t.ln.Close() }

// Addr implements net.Listener.
func (t *tlsStream) Addr() net.Addr { return t.ln.Addr() }

// Dial implements raft.StreamLayer.
func (t *tlsStream) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", string(address), t.dialer)
}

// newTransport makes the Raft transport: plain TCP, or mutual TLS when
// conf is set.
func newTransport(addr string, conf *tls.Config, log hclog.Logger) (*raft.NetworkTransport, error) {
	if conf == nil {
		return raft.NewTCPTransportWithLogger(addr, nil, 3, 10*time.Second, log)
	}
	stream, err := newTLSStream(addr, conf)
	if err != nil {
		return nil, err
	}
	return raft.NewNetworkTransportWithLogger(stream, 3, 10*time.Second, log), nil
}
