package forward

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A node's API listener serves with the config its transport is given:
// the transport's requests leave that config as it was (an
// http.Transport adds "h2" to its own config's NextProtos).
func TestNewTransportLeavesItsConfigAlone(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	conf := &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, NextProtos: []string{"http/1.1"}}
	tr := NewTransport(conf)
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(conf.NextProtos) != 1 || conf.NextProtos[0] != "http/1.1" {
		t.Errorf("after a request the caller's config offers %q, want only http/1.1", conf.NextProtos)
	}
}
