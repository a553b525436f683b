package raftstore

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Files of a node's Raft identity when the cluster made its own CA, in
// DataDir/tls. Every server keeps the CA key: whichever leads signs the
// certificates of joining servers (Consul's servers share their CA the
// same way). The directory and the keys are 0700/0600.
const (
	tlsDirName  = "tls"
	caFile      = "ca.pem"
	caKeyFile   = "ca-key.pem"
	nodeFile    = "node.pem"
	nodeKeyFile = "node-key.pem"
)

// maxCommonName is X.509's upper bound on a common name (RFC 5280), which
// holds a joining node's id.
const maxCommonName = 64

// issuer signs the certificates of joining servers.
type issuer struct {
	ca  *x509.Certificate
	key *ecdsa.PrivateKey
}

// joinAnswer is the leader's answer to POST /v1/raft/join. For a new node
// that sent a certificate request, it carries the node's Raft certificate
// and the cluster's CA with its key, so that the node can later sign joins
// itself when it leads.
type joinAnswer struct {
	Leader string `json:"leader"`
	Cert   []byte `json:"cert,omitempty"`
	CA     []byte `json:"ca,omitempty"`
	CAKey  []byte `json:"ca_key,omitempty"`
	// Keys is the cluster's keyring (Keyring.Export), which seals secret
	// contents: every server holds it.
	Keys []byte `json:"keys,omitempty"`
}

// setupIdentity gives the transport this node's identity: the operator's
// certificate, or the one kept in DataDir/tls, or, on a bootstrap node
// without one, a new CA and certificate. A joining node without either gets its
// certificate through the join (see join) and until then talks to no one.
func (s *Store) setupIdentity(hasState bool) error {
	if conf := s.cfg.RaftTLS; conf != nil {
		id, err := operatorIdentity(conf)
		if err != nil {
			return err
		}
		s.stream.setIdentity(id)
		return nil
	}
	dir := filepath.Join(s.cfg.DataDir, tlsDirName)
	if _, err := os.Stat(filepath.Join(dir, nodeFile)); err == nil {
		iss, id, err := loadIdentity(dir)
		if err != nil {
			return fmt.Errorf("raft identity in %s: %w", dir, err)
		}
		s.issuer = iss
		s.stream.setIdentity(id)
		return nil
	}
	switch {
	case hasState && !s.cfg.Bootstrap:
		return fmt.Errorf("node %s has Raft state but no Raft certificate in %s (its data dir predates authenticated Raft, or the directory was removed): wipe %s and join the node again",
			s.cfg.NodeID, dir, s.cfg.DataDir)
	case s.cfg.Bootstrap:
		if hasState {
			// A data dir from before authenticated Raft, as `up` keeps
			// one: a single node carries on; any other server must
			// join again to get a certificate of the new CA.
			s.log.Warn("this data dir has Raft state but no Raft certificate: making a new cluster CA; wipe the other servers' data dirs and join them again", "dir", dir)
		}
		ca, caKey, err := NewCA("fixpoint cluster CA")
		if err != nil {
			return fmt.Errorf("make the cluster CA: %w", err)
		}
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		cert, err := IssueCert(ca, caKey, &key.PublicKey, RoleServer, s.cfg.NodeID, nil)
		if err != nil {
			return err
		}
		keyPEM, err := EncodeKey(key)
		if err != nil {
			return err
		}
		caKeyPEM, err := EncodeKey(caKey)
		if err != nil {
			return err
		}
		if err := saveIdentity(dir, EncodeCert(cert), keyPEM, EncodeCert(ca), caKeyPEM); err != nil {
			return fmt.Errorf("keep the raft identity in %s: %w", dir, err)
		}
		iss, id, err := loadIdentity(dir)
		if err != nil {
			return fmt.Errorf("raft identity in %s: %w", dir, err)
		}
		s.issuer = iss
		s.stream.setIdentity(id)
		s.log.Info("made the cluster's Raft CA and this node's certificate", "dir", dir)
	default:
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		s.joinKey = key
	}
	return nil
}

// operatorIdentity checks that the operator's certificate may speak Raft
// and uses it.
func operatorIdentity(conf *tls.Config) (*identity, error) {
	if len(conf.Certificates) == 0 || conf.RootCAs == nil {
		return nil, errors.New("raft TLS needs a certificate and the CA that signed the cluster's certificates")
	}
	cert := conf.Certificates[0]
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		if _, err := verifyServerPeer(cert.Certificate, conf.RootCAs, usage); err != nil {
			return nil, fmt.Errorf("this node's certificate can not speak Raft: %w (make one with `fixpoint tls cert --role server`)", err)
		}
	}
	return &identity{cert: cert, pool: conf.RootCAs}, nil
}

// loadIdentity reads DataDir/tls; the CA key is optional there.
func loadIdentity(dir string) (*issuer, *identity, error) {
	caPEM, err := os.ReadFile(filepath.Join(dir, caFile))
	if err != nil {
		return nil, nil, err
	}
	ca, err := DecodeCert(caPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", caFile, err)
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, nodeFile), filepath.Join(dir, nodeKeyFile))
	if err != nil {
		return nil, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	if _, err := verifyServerPeer(pair.Certificate, pool, x509.ExtKeyUsageClientAuth); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", nodeFile, err)
	}
	id := &identity{cert: pair, pool: pool}
	keyPEM, err := os.ReadFile(filepath.Join(dir, caKeyFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, id, nil
	}
	if err != nil {
		return nil, nil, err
	}
	key, err := DecodeKey(keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", caKeyFile, err)
	}
	return &issuer{ca: ca, key: key}, id, nil
}

// saveIdentity writes the identity files, keys 0600, certificates 0644;
// the node's certificate last, since its presence means "complete".
func saveIdentity(dir string, cert, key, ca, caKey []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	files := []struct {
		name string
		data []byte
		mode os.FileMode
	}{{caFile, ca, 0o644}, {caKeyFile, caKey, 0o600}, {nodeKeyFile, key, 0o600}, {nodeFile, cert, 0o644}}
	for _, f := range files {
		if f.data == nil {
			continue
		}
		if err := writeFileAtomic(filepath.Join(dir, f.name), f.data, f.mode); err != nil {
			return err
		}
	}
	return nil
}

// certRequest is this joining node's request for a Raft certificate.
func (s *Store) certRequest() ([]byte, error) {
	if s.joinKey == nil {
		return nil, nil
	}
	return x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: s.cfg.NodeID}}, s.joinKey)
}

// signJoin answers a joining node's certificate request; it runs on the
// leader and adds nothing to the cluster.
func (s *Store) signJoin(req joinRequest) (joinAnswer, error) {
	ans := joinAnswer{Leader: s.cfg.NodeID}
	if len(req.ID) > maxCommonName {
		return ans, &badRequest{fmt.Sprintf("join: node id of %d bytes: a certificate's common name holds at most %d", len(req.ID), maxCommonName)}
	}
	if s.issuer == nil {
		return ans, &conflictError{fmt.Sprintf("this cluster's Raft runs on certificates the operator made, so it can not issue one: start node %s with --tls-cert/--tls-key/--tls-ca and a certificate from `fixpoint tls cert --role server`", req.ID)}
	}
	csr, err := x509.ParseCertificateRequest(req.CSR)
	if err != nil {
		return ans, &badRequest{fmt.Sprintf("join of %s: certificate request: %v", req.ID, err)}
	}
	if err := csr.CheckSignature(); err != nil {
		return ans, &badRequest{fmt.Sprintf("join of %s: certificate request: %v", req.ID, err)}
	}
	cert, err := IssueCert(s.issuer.ca, s.issuer.key, csr.PublicKey, RoleServer, req.ID, nil)
	if err != nil {
		return ans, fmt.Errorf("join of %s: %w", req.ID, err)
	}
	caKey, err := EncodeKey(s.issuer.key)
	if err != nil {
		return ans, err
	}
	ans.Cert, ans.CA, ans.CAKey = EncodeCert(cert), EncodeCert(s.issuer.ca), caKey
	ans.Keys = s.keys.Export()
	return ans, nil
}

// acceptJoin checks the certificate a join brought back, keeps it and
// starts using it.
func (s *Store) acceptJoin(ans joinAnswer) error {
	if s.joinKey == nil {
		return nil
	}
	if len(ans.Cert) == 0 || len(ans.CA) == 0 {
		return errors.New("the leader sent no Raft certificate back")
	}
	ca, err := DecodeCert(ans.CA)
	if err != nil {
		return fmt.Errorf("the cluster CA: %w", err)
	}
	cert, err := DecodeCert(ans.Cert)
	if err != nil {
		return fmt.Errorf("this node's certificate: %w", err)
	}
	if pub, ok := cert.PublicKey.(*ecdsa.PublicKey); !ok || !pub.Equal(&s.joinKey.PublicKey) {
		return errors.New("the certificate the leader sent is not for this node's key")
	}
	if len(ans.CAKey) > 0 {
		caKey, err := DecodeKey(ans.CAKey)
		if err != nil {
			return fmt.Errorf("the cluster CA key: %w", err)
		}
		if !caKey.PublicKey.Equal(ca.PublicKey) {
			return errors.New("the cluster CA key does not match its certificate")
		}
	}
	keyPEM, err := EncodeKey(s.joinKey)
	if err != nil {
		return err
	}
	dir := filepath.Join(s.cfg.DataDir, tlsDirName)
	if err := saveIdentity(dir, EncodeCert(cert), keyPEM, EncodeCert(ca), ans.CAKey); err != nil {
		return fmt.Errorf("keep the raft identity in %s: %w", dir, err)
	}
	iss, id, err := loadIdentity(dir)
	if err != nil {
		return fmt.Errorf("raft identity in %s: %w", dir, err)
	}
	s.issuer = iss
	s.stream.setIdentity(id)
	s.joinKey = nil
	s.log.Info("received this node's Raft certificate through the join", "dir", dir)
	return nil
}
