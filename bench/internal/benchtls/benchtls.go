// Package benchtls gives the benches' three-node clusters README's
// production setup: a CA and a server certificate per node made by
// `fixpoint tls`, the servers' API over HTTPS, and clients that trust
// the CA.
package benchtls

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
)

// Set is the CA and the servers' certificates in one directory.
type Set struct {
	dir  string
	conf *tls.Config
}

// Make runs bin's `tls init` in dir and `tls cert --role server` for
// each of nodes, on 127.0.0.1.
func Make(bin, dir string, nodes ...string) (*Set, error) {
	run := func(args ...string) error {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("fixpoint %v: %v\n%s", args, err, out)
		}
		return nil
	}
	if err := run("tls", "init", "--dir", dir); err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if err := run("tls", "cert", "--dir", dir, "--role", "server", "--name", n, "--host", "127.0.0.1,localhost"); err != nil {
			return nil, err
		}
	}
	pem, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no certificate", filepath.Join(dir, "ca.pem"))
	}
	return &Set{dir: dir, conf: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}, nil
}

// ServerFlags are the --tls-* flags of node's `fixpoint server`; none
// when s is nil.
func (s *Set) ServerFlags(node string) []string {
	if s == nil {
		return nil
	}
	return []string{"--tls-cert", filepath.Join(s.dir, node+".pem"), "--tls-key", filepath.Join(s.dir, node+"-key.pem"), "--tls-ca", s.CA()}
}

// ClientFlags are the flags of a client command or an agent: --tls-ca;
// none when s is nil.
func (s *Set) ClientFlags() []string {
	if s == nil {
		return nil
	}
	return []string{"--tls-ca", s.CA()}
}

// CA is the CA certificate's file.
func (s *Set) CA() string { return filepath.Join(s.dir, "ca.pem") }

// Config is a client's TLS config, trusting the CA; nil when s is nil.
func (s *Set) Config() *tls.Config {
	if s == nil {
		return nil
	}
	return s.conf.Clone()
}

// Transport is a clone of net/http's default transport that trusts the
// CA when s is not nil, as `fixpoint agent --tls-ca` builds its own.
func (s *Set) Transport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = s.Config()
	return tr
}
