package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fixpoint/fixpoint/raftstore"
)

func newTLSCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tls",
		Short: "Make a CA and certificates for the API, Raft and agents",
		Long: `tls init makes a certificate authority; tls cert makes a certificate signed by
it with a role recorded in it: a server's is valid as TLS server and client
and is the only kind that may speak Raft; an agent's and a client's are for
the HTTP API only. Then start servers with --tls-cert/--tls-key/--tls-ca,
agents and commands with --tls-ca (and their own certificate when they have
one). Without any of these, servers still run Raft over mutual TLS: the
bootstrap node makes the cluster's own CA and joining servers get their
certificates through the join.`,
	}
	cmd.AddCommand(newTLSInitCmd(), newTLSCertCmd())
	return cmd
}

func newTLSInitCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:     "init",
		Short:   "Make a certificate authority in --dir (ca.pem, ca-key.pem)",
		Example: `  fixpoint tls init --dir /etc/fixpoint/tls`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := os.Stat(filepath.Join(dir, "ca.pem")); err == nil {
				return exitf(exitFailed, "%s already holds a CA; remove ca.pem and ca-key.pem to make a new one (every certificate signed by the old one stops working)", dir)
			}
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return exitf(exitFailed, "%v", err)
			}
			ca, key, err := raftstore.NewCA("fixpoint CA")
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, "ca.pem"), raftstore.EncodeCert(ca), 0o644); err != nil {
				return exitf(exitFailed, "%v", err)
			}
			if err := writeKey(filepath.Join(dir, "ca-key.pem"), key); err != nil {
				return exitf(exitFailed, "%v", err)
			}
			fmt.Printf("CA written to %s (ca.pem, ca-key.pem)\n", dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "tls", "directory for the CA")
	return cmd
}

func newTLSCertCmd() *cobra.Command {
	var dir, name, hosts, role string
	var force bool
	cmd := &cobra.Command{
		Use:   "cert --role server|agent|client --name NAME [--host HOST[,HOST]]",
		Short: "Make a certificate for a server, agent or client, signed by the CA in --dir",
		Example: `  fixpoint tls cert --dir /etc/fixpoint/tls --role server --name n1 --host 10.0.0.1,n1.example.com
  fixpoint tls cert --dir /etc/fixpoint/tls --role agent --name agent-m1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return exitf(exitFailed, "--name is required: the certificate's file names and common name")
			}
			if !slices.Contains(raftstore.Roles, role) {
				return exitf(exitFailed, "--role %q: want one of %s (only servers may speak Raft)", role, strings.Join(raftstore.Roles, ", "))
			}
			// Like tls init: a running node may use the old one.
			if _, err := os.Stat(filepath.Join(dir, name+".pem")); err == nil && !force {
				return exitf(exitFailed, "%s already holds a certificate for %s; pass --force to replace it (the node or agent using it must be restarted)", dir, name)
			}
			ca, caKey, err := loadCA(dir)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			if err != nil {
				return err
			}
			var hs []string
			if role == raftstore.RoleServer {
				hs = strings.Split(hosts, ",")
			}
			cert, err := raftstore.IssueCert(ca, caKey, &key.PublicKey, role, name, hs)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			if err := os.WriteFile(filepath.Join(dir, name+".pem"), raftstore.EncodeCert(cert), 0o644); err != nil {
				return exitf(exitFailed, "%v", err)
			}
			if err := writeKey(filepath.Join(dir, name+"-key.pem"), key); err != nil {
				return exitf(exitFailed, "%v", err)
			}
			fmt.Printf("%s certificate for %s written to %s (%s.pem, %s-key.pem)\n", role, name, dir, name, name)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "tls", "directory holding the CA")
	cmd.Flags().StringVar(&role, "role", "", "server (API and Raft), agent or client (API only)")
	cmd.Flags().StringVar(&name, "name", "", "name of the node, agent or client")
	cmd.Flags().StringVar(&hosts, "host", "127.0.0.1,localhost", "addresses and DNS names a server's certificate is valid for, comma-separated")
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing certificate of that name")
	return cmd
}

// writeKey writes a private key readable by its owner only.
func writeKey(path string, key *ecdsa.PrivateKey) error {
	b, err := raftstore.EncodeKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

func loadCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		return nil, nil, fmt.Errorf("no CA in %s: run `fixpoint tls init --dir %s` first", dir, dir)
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, "ca-key.pem"))
	if err != nil {
		return nil, nil, fmt.Errorf("the CA key %s is missing", filepath.Join(dir, "ca-key.pem"))
	}
	cert, err := raftstore.DecodeCert(certPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, "ca.pem"), err)
	}
	key, err := raftstore.DecodeKey(keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, "ca-key.pem"), err)
	}
	return cert, key, nil
}

// tlsFlags are the TLS settings of a process.
type tlsFlags struct {
	cert, key, ca string
}

func (t *tlsFlags) flags(f *pflag.FlagSet) {
	f.StringVar(&t.cert, "tls-cert", "", "this process's certificate (PEM), from fixpoint tls cert")
	f.StringVar(&t.key, "tls-key", "", "its private key (PEM)")
	f.StringVar(&t.ca, "tls-ca", "", "the CA certificate (PEM) peers and servers must chain to")
}

func (t *tlsFlags) on() bool { return t.cert != "" || t.key != "" || t.ca != "" }

// config builds a tls.Config that trusts the CA and presents the
// certificate, if any; server says whether a certificate is required.
func (t *tlsFlags) config(server bool) (*tls.Config, error) {
	if !t.on() {
		return nil, nil
	}
	if t.ca == "" {
		return nil, errors.New("--tls-ca is required with TLS: the CA that signed the certificates")
	}
	pemCA, err := os.ReadFile(t.ca)
	if err != nil {
		return nil, fmt.Errorf("--tls-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemCA) {
		return nil, fmt.Errorf("--tls-ca %s holds no PEM certificate", t.ca)
	}
	conf := &tls.Config{RootCAs: pool, ClientCAs: pool, MinVersion: tls.VersionTLS12}
	if (t.cert == "") != (t.key == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	if t.cert != "" {
		pair, err := tls.LoadX509KeyPair(t.cert, t.key)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		conf.Certificates = []tls.Certificate{pair}
	} else if server {
		return nil, errors.New("a server needs --tls-cert and --tls-key with --tls-ca")
	}
	return conf, nil
}

// httpClient is a client for the API with this TLS configuration.
func (t *tlsFlags) httpClient() (*http.Client, error) {
	conf, err := t.config(false)
	if err != nil || conf == nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = conf
	return &http.Client{Transport: tr}, nil
}
