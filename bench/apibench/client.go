package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
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
		if err != nil || u.Scheme != "http" {
			return nil, fmt.Errorf("-client raw speaks plain http, not %q", addr)
		}
		return &rawSender{host: u.Host}, nil
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

// rawSender keeps one connection and writes each request in one piece.
type rawSender struct {
	host string
	conn net.Conn
	br   *bufio.Reader
	req  []byte
	body []byte
}

// requestTimeout bounds one request, as post's context does.
const requestTimeout = 30 * time.Second

func (s *rawSender) write(a agent, i int64) error {
	if s.conn == nil {
		c, err := net.DialTimeout("tcp", s.host, 5*time.Second)
		if err != nil {
			return err
		}
		s.conn, s.br = c, bufio.NewReader(c)
	}
	s.body = body(s.body[:0], a, i)
	r := append(s.req[:0], "POST /v1/agent/register HTTP/1.1\r\nHost: "...)
	r = append(r, s.host...)
	r = append(r, "\r\nAuthorization: Bearer "...)
	r = append(r, a.token...)
	r = append(r, "\r\nContent-Type: application/json\r\nContent-Length: "...)
	r = strconv.AppendInt(r, int64(len(s.body)), 10)
	r = append(r, "\r\n\r\n"...)
	r = append(r, s.body...)
	s.req = r
	_ = s.conn.SetDeadline(time.Now().Add(requestTimeout))
	if _, err := s.conn.Write(r); err != nil {
		s.close()
		return err
	}
	resp, err := http.ReadResponse(s.br, nil)
	if err != nil {
		s.close()
		return err
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil || resp.Close {
		s.close()
	}
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, trim(data))
	}
	return nil
}

func (s *rawSender) close() {
	if s.conn != nil {
		s.conn.Close()
		s.conn, s.br = nil, nil
	}
}

func trim(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}
