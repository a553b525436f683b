package main

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/raftstore"
)

// tls cert records the role it is asked for, which the Raft transport
// checks: only a server's certificate is valid as a TLS server and carries
// the server role. A certificate without a role is not made.
func TestTLSCertRoles(t *testing.T) {
	dir := t.TempDir()
	if r := fixpoint(t, time.Minute, "tls", "init", "--dir", dir); r.code != 0 {
		t.Fatalf("tls init: %s", r.stderr)
	}
	if r := fixpoint(t, time.Minute, "tls", "cert", "--dir", dir, "--name", "x"); r.code == 0 || !strings.Contains(r.stderr, "--role") {
		t.Errorf("tls cert without --role: exit %d, %s", r.code, r.stderr)
	}
	for _, role := range raftstore.Roles {
		name := "c-" + role
		if r := fixpoint(t, time.Minute, "tls", "cert", "--dir", dir, "--role", role, "--name", name); r.code != 0 {
			t.Fatalf("tls cert --role %s: %s", role, r.stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, name+".pem"))
		if err != nil {
			t.Fatal(err)
		}
		cert, err := raftstore.DecodeCert(b)
		if err != nil {
			t.Fatal(err)
		}
		if got := raftstore.CertRole(cert); got != role {
			t.Errorf("--role %s: the certificate says %q", role, got)
		}
		if server := slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageServerAuth); server != (role == raftstore.RoleServer) {
			t.Errorf("--role %s: valid as a TLS server = %v", role, server)
		}
		if fi, err := os.Stat(filepath.Join(dir, name+"-key.pem")); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("--role %s: key %v %v, want 0600", role, fi, err)
		}
	}
}
