package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/fixpoint/fixpoint/bench/internal/rawhttp"
)

// sender sends one writer's requests, one after the other.
type sender interface {
	// write renews a's registration under the i-th address.
	write(a agent, i int64) error
	close()
}

// newSender returns a writer's sender of the kind -client names: "raw"
// writes each request to its own keep-alive connection in one write and
// reads the answer with net/http's parser; "nethttp" goes through an
// http.Client shared by all writers. Both speak HTTP/1.1 to the same
// endpoint with the same headers; raw spends a fraction of the CPU (no
// transport goroutines per connection), which on a box the bench shares
// with the servers goes to the servers instead.
func newSender(kind, addr string, shared *http.Client) (sender, error) {
	switch kind {
	case "nethttp":
		return &netHTTPSender{client: shared, url: addr + "/v1/agent/register"}, nil
	case "raw":
		u, err := url.Parse(addr)
		if err != nil || (u.Scheme != "http" && (u.Scheme != "https" || secure == nil)) {
			return nil, fmt.Errorf("-client raw speaks http, or https with -tls, not %q", addr)
		}
		return &rawSender{c: rawhttp.Conn{Host: u.Host, Timeout: requestTimeout, TLS: secure.Config()}}, nil
	}
	return nil, fmt.Errorf("-client is raw or nethttp, not %q", kind)
}

// body is the registration the i-th write sends.
func body(buf []byte, a agent, i int64) []byte {
	return fmt.Appendf(buf, `{"machine":%q,"address":"10.%d.%d.%d"}`, a.machine, i/62500%250, i/250%250, i%250)
}

// netHTTPSender posts through net/http's client.
type netHTTPSender struct {
	client *http.Client
	url    string
}

func (s *netHTTPSender) write(a agent, i int64) error {
	_, err := post(s.client, s.url, a.token, string(body(nil, a, i)))
	return err
}

func (s *netHTTPSender) close() {}

// rawSender keeps one connection and writes each request in one piece
// (rawhttp).
type rawSender struct {
	c    rawhttp.Conn
	body []byte
}

// requestTimeout bounds one request, as post's context does.
const requestTimeout = 30 * time.Second

func (s *rawSender) write(a agent, i int64) error {
	s.body = body(s.body[:0], a, i)
	s.c.Token = a.token
	status, data, _, err := s.c.Do(context.Background(), http.MethodPost, "/v1/agent/register", s.body)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("%d %s: %s", status, http.StatusText(status), rawhttp.Excerpt(data))
	}
	return nil
}

func (s *rawSender) close() { s.c.Close() }
