package main

import (
	"crypto/tls"
	"crypto/x509"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// README's production path: three servers with the API over TLS, an
// agent given the CA, the demo applied with --wait. Every step of the
// demo's convergence is a hand-out and a result on the agent's
// connections: the whole apply takes well under one 30 s long poll, as
// over plain HTTP.
func TestTLSClusterConvergesTheDemoWithinAPoll(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four processes; skipped in -short")
	}
	c := startCluster(t, 3, true, "--agent-ttl", "2s")
	m1 := c.agent("m1")
	c.waitMachines("m1")
	start := time.Now()
	r := c.cli("apply", "-f", repo("testdata", "demo", "env.cue"), "--yes", "--wait", "--timeout", "3m")
	took := time.Since(start)
	if r.code != 0 {
		t.Fatalf("apply: %d\n%s\n%s\n%s", r.code, r.stdout, r.stderr, m1.out.String())
	}
	if took > 15*time.Second {
		t.Errorf("apply --wait took %s over TLS, want well under the agents' 30 s poll\n%s", took.Round(time.Millisecond), m1.out.String())
	}
	// The nodes have talked to one another by now (joins, forwarded
	// requests); each still serves its API one request per connection.
	pem, err := os.ReadFile(filepath.Join(c.tlsDir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	for _, addr := range c.addrs {
		u, err := url.Parse(addr)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := tls.Dial("tcp", u.Host, &tls.Config{RootCAs: pool, NextProtos: []string{"h2", "http/1.1"}})
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		if p := conn.ConnectionState().NegotiatedProtocol; p != "http/1.1" {
			t.Errorf("%s speaks %q to a client offering h2, want http/1.1", addr, p)
		}
		conn.Close()
	}
}
