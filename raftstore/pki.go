package raftstore

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Roles a certificate of a fixpoint CA carries. Only RoleServer may speak
// Raft; agents and clients use theirs for the HTTP API only.
const (
	RoleServer = "server"
	RoleAgent  = "agent"
	RoleClient = "client"
)

// Roles lists the roles `fixpoint tls cert --role` accepts.
var Roles = []string{RoleServer, RoleAgent, RoleClient}

// roleURIPrefix starts the URI SAN that records a certificate's role: a
// SAN is covered by the CA's signature, unlike anything a peer says.
const roleURIPrefix = "urn:fixpoint:role:"

// Lifetimes of what the tools and the cluster's own CA issue.
const (
	caLifetime   = 10 * 365 * 24 * time.Hour
	certLifetime = 2 * 365 * 24 * time.Hour
)

// CertRole returns the role recorded in cert, "" if it has none.
func CertRole(cert *x509.Certificate) string {
	for _, u := range cert.URIs {
		if s := u.String(); strings.HasPrefix(s, roleURIPrefix) {
			return strings.TrimPrefix(s, roleURIPrefix)
		}
	}
	return ""
}

// NewCA makes a self-signed certificate authority.
func NewCA(name string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(caLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

// IssueCert signs a certificate for pub with the given role. A server's
// is valid for TLS in both directions (it serves the API and dials and
// answers Raft); an agent's and a client's only as a TLS client. hosts are
// the IP addresses and DNS names a server is reached at.
func IssueCert(ca *x509.Certificate, caKey crypto.Signer, pub crypto.PublicKey, role, name string, hosts []string) (*x509.Certificate, error) {
	if !slices.Contains(Roles, role) {
		return nil, fmt.Errorf("role %q: want one of %s", role, strings.Join(Roles, ", "))
	}
	if name == "" {
		return nil, errors.New("a certificate needs a name")
	}
	uri, err := url.Parse(roleURIPrefix + role)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: name, OrganizationalUnit: []string{role}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(certLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		URIs:         []*url.URL{uri},
	}
	if role == RoleServer {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	for _, h := range hosts {
		if h = strings.TrimSpace(h); h == "" {
			continue
		}
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, pub, caKey)
	if err != nil {
		return nil, fmt.Errorf("sign %s certificate for %s: %w", role, name, err)
	}
	return x509.ParseCertificate(der)
}

// verifyServerPeer checks a Raft peer's certificate chain against the
// cluster's CA pool, for the given use, and that the leaf has the server
// role: an agent's or a client's certificate from the same CA is refused.
func verifyServerPeer(raw [][]byte, roots *x509.CertPool, usage x509.ExtKeyUsage) (*x509.Certificate, error) {
	if len(raw) == 0 {
		return nil, errors.New("no certificate")
	}
	if roots == nil {
		return nil, errors.New("this node has no Raft certificate yet")
	}
	certs := make([]*x509.Certificate, len(raw))
	for i, r := range raw {
		c, err := x509.ParseCertificate(r)
		if err != nil {
			return nil, fmt.Errorf("parse certificate: %w", err)
		}
		certs[i] = c
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	leaf := certs[0]
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
		return leaf, fmt.Errorf("certificate %q: %w", leaf.Subject.CommonName, err)
	}
	if role := CertRole(leaf); role != RoleServer {
		return leaf, fmt.Errorf("certificate %q has role %q: only servers may speak Raft", leaf.Subject.CommonName, orNone(role))
	}
	return leaf, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic("raftstore: no randomness: " + err.Error())
	}
	return n
}

// EncodeCert is a certificate as PEM.
func EncodeCert(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// EncodeKey is an EC private key as PEM.
func EncodeKey(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// DecodeCert parses one PEM certificate.
func DecodeCert(b []byte) (*x509.Certificate, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil, errors.New("not a PEM certificate")
	}
	return x509.ParseCertificate(blk.Bytes)
}

// DecodeKey parses one PEM EC private key.
func DecodeKey(b []byte) (*ecdsa.PrivateKey, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "EC PRIVATE KEY" {
		return nil, errors.New("not a PEM EC private key")
	}
	return x509.ParseECPrivateKey(blk.Bytes)
}

// writeFileAtomic writes data to path with mode through a temp file, so
// a crash leaves the old file or the new one.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
