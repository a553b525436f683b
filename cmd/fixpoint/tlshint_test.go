package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/raftstore"
)

// tlsServer serves HTTPS on loopback with a server certificate of a new
// CA valid for hosts; it returns its URL and the CA's file.
func tlsServer(t *testing.T, hosts ...string) (string, string) {
	t.Helper()
	ca, caKey, err := raftstore.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := raftstore.IssueCert(ca, caKey, &key.PublicKey, raftstore.RoleServer, "n1", hosts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{cert.Raw}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, raftstore.EncodeCert(ca), 0o644); err != nil {
		t.Fatal(err)
	}
	return srv.URL, caFile
}

// get asks url through a client with the CA in caFile ("" for none) and
// the hints, and returns the error.
func get(t *testing.T, url, caFile string) error {
	t.Helper()
	tf := tlsFlags{ca: caFile}
	hc, err := tf.httpClient()
	if err != nil {
		t.Fatal(err)
	}
	c := withTLSHints(hc, caFile, "--tls-ca")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// Each TLS failure says which file to pass and how.
func TestTLSErrorsSayWhatToPass(t *testing.T) {
	url, caFile := tlsServer(t, "127.0.0.1")
	if err := get(t, url, caFile); err != nil {
		t.Fatalf("with its CA: %v", err)
	}
	err := get(t, url, "")
	if err == nil || !strings.Contains(err.Error(), "not signed by a CA you trust") || !strings.Contains(err.Error(), "--tls-ca tls/ca.pem") || !strings.Contains(err.Error(), "FIXPOINT_CA") {
		t.Errorf("without a CA: %v", err)
	}
	_, otherCA := tlsServer(t, "127.0.0.1")
	err = get(t, url, otherCA)
	if err == nil || !strings.Contains(err.Error(), "not signed by the CA in "+otherCA+" (given by --tls-ca)") {
		t.Errorf("with another CA: %v", err)
	}
	named, namedCA := tlsServer(t, "db.example")
	err = get(t, named, namedCA)
	if err == nil || !strings.Contains(err.Error(), "not valid for 127.0.0.1 (it is for db.example)") || !strings.Contains(err.Error(), "--host 127.0.0.1") {
		t.Errorf("hostname mismatch: %v", err)
	}
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer plain.Close()
	host := strings.TrimPrefix(plain.URL, "http://")
	err = get(t, "https://"+host, caFile)
	if err == nil || !strings.Contains(err.Error(), "answers plain HTTP, not HTTPS: address it as http://"+host) {
		t.Errorf("https to a plain server: %v", err)
	}
}

func TestHTTPSByDefault(t *testing.T) {
	got := strings.Join(httpsByDefault([]string{"10.0.0.1:8080", " http://a:1", "https://b:2"}), ",")
	if got != "https://10.0.0.1:8080,http://a:1,https://b:2" {
		t.Errorf("httpsByDefault = %s", got)
	}
}
