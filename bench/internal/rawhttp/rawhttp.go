// Package rawhttp is the benches' HTTP/1.1 client: one keep-alive
// connection, each request written in one piece and each answer read
// with net/http's parser, without net/http's client. Through that
// client every answer passed through the connection's read-loop
// goroutine before the caller's, with a context and a timer per request:
// on a box the benches share with the servers, that CPU and those
// hand-offs were the bench's, measured as the server's.
package rawhttp

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Conn is one client connection to host, dialled on first use and again
// after an error. It is not safe for concurrent use.
type Conn struct {
	// Host is the server's host:port.
	Host string
	// Token is sent as the bearer credential of every request.
	Token string
	// Timeout bounds each request when set; 0 leaves a request (a long
	// poll) to ctx, which closes the connection when it ends.
	Timeout time.Duration

	conn  net.Conn
	br    *bufio.Reader
	first firstRead
	req   []byte
}

// firstRead notes when the first read after a request returned bytes:
// the answer's first byte, taken in the caller's goroutine as the read
// returns.
type firstRead struct {
	r  io.Reader
	at time.Time
}

func (f *firstRead) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if n > 0 && f.at.IsZero() {
		f.at = time.Now()
	}
	return n, err
}

// maxAnswer bounds an answer's body.
const maxAnswer = 64 << 20

// Do sends one request (a JSON body if body is not nil) and returns the
// answer's status, its body and when its first byte came.
func (c *Conn) Do(ctx context.Context, method, path string, body []byte) (int, []byte, time.Time, error) {
	if c.conn == nil {
		d := net.Dialer{Timeout: c.Timeout}
		conn, err := d.DialContext(ctx, "tcp", c.Host)
		if err != nil {
			return 0, nil, time.Time{}, err
		}
		c.conn, c.first.r = conn, conn
		c.br = bufio.NewReader(&c.first)
		context.AfterFunc(ctx, func() { conn.Close() })
	}
	r := append(c.req[:0], method...)
	r = append(r, ' ')
	r = append(r, path...)
	r = append(r, " HTTP/1.1\r\nHost: "...)
	r = append(r, c.Host...)
	r = append(r, "\r\nAuthorization: Bearer "...)
	r = append(r, c.Token...)
	if body != nil {
		r = append(r, "\r\nContent-Type: application/json\r\nContent-Length: "...)
		r = strconv.AppendInt(r, int64(len(body)), 10)
	}
	r = append(r, "\r\n\r\n"...)
	r = append(r, body...)
	c.req = r
	c.first.at = time.Time{}
	if c.Timeout > 0 {
		_ = c.conn.SetDeadline(time.Now().Add(c.Timeout))
	}
	if _, err := c.conn.Write(r); err != nil {
		c.Close()
		return 0, nil, time.Time{}, err
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		c.Close()
		return 0, nil, time.Time{}, err
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	resp.Body.Close()
	if err != nil || resp.Close {
		c.Close()
	}
	return resp.StatusCode, data, c.first.at, err
}

// Close closes the connection; the next Do dials again.
func (c *Conn) Close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn, c.br = nil, nil
	}
}

// Excerpt is the start of an answer's body, for an error message.
func Excerpt(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}
