package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/fixpoint/fixpoint/engine"
)

// rawAgent is one simulated agent's connection to the server: its
// requests written in one piece to its own keep-alive connection and the
// answers read with net/http's parser, as bench/apibench's raw client
// does. Through net/http's client every answer went through the
// connection's read-loop goroutine before the agent's own, and the
// bench's goroutines stood in line on the two cores the server uses:
// its first-byte times came 7-12 ms after the server had written the
// last answer of a change (stage stamps, bench/README.md).
type rawAgent struct {
	host, token, machine string
	conn                 net.Conn
	br                   *bufio.Reader
	first                firstRead
	req                  []byte
}

// firstRead notes when the first read after a request returned bytes:
// the answer's first byte, taken in the agent's own goroutine as the
// read returns.
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

// do sends one request and returns the answer's status, body and when
// its first byte came.
func (a *rawAgent) do(ctx context.Context, method, path string, body []byte) (int, []byte, time.Time, error) {
	if a.conn == nil {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", a.host)
		if err != nil {
			return 0, nil, time.Time{}, err
		}
		a.conn = c
		a.first.r = c
		a.br = bufio.NewReader(&a.first)
		// A poll waits up to a minute: the bench's end closes it.
		context.AfterFunc(ctx, func() { c.Close() })
	}
	r := append(a.req[:0], method...)
	r = append(r, ' ')
	r = append(r, path...)
	r = append(r, " HTTP/1.1\r\nHost: "...)
	r = append(r, a.host...)
	r = append(r, "\r\nAuthorization: Bearer "...)
	r = append(r, a.token...)
	if body != nil {
		r = append(r, "\r\nContent-Type: application/json\r\nContent-Length: "...)
		r = strconv.AppendInt(r, int64(len(body)), 10)
	}
	r = append(r, "\r\n\r\n"...)
	r = append(r, body...)
	a.req = r
	a.first.at = time.Time{}
	if _, err := a.conn.Write(r); err != nil {
		a.close()
		return 0, nil, time.Time{}, err
	}
	resp, err := http.ReadResponse(a.br, nil)
	if err != nil {
		a.close()
		return 0, nil, time.Time{}, err
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	resp.Body.Close()
	if err != nil || resp.Close {
		a.close()
	}
	return resp.StatusCode, data, a.first.at, err
}

func (a *rawAgent) close() {
	if a.conn != nil {
		a.conn.Close()
		a.conn, a.br = nil, nil
	}
}

// claim long-polls for the agent's work and returns when the first byte
// of the answer arrived (the server's wake), with the answer's body, nil
// if the wait ended without work. The body is decoded by the caller
// after the stamp and the hook's wait: decoding 100 universes' answers
// on the cores the server shares delayed the next agents' reads in the
// middle of the wake being measured.
func (a *rawAgent) claim(ctx context.Context) ([]byte, time.Time, error) {
	status, body, first, err := a.do(ctx, http.MethodGet, "/v1/agent/work?machine="+url.QueryEscape(a.machine)+"&wait=60s", nil)
	if err != nil {
		return nil, first, err
	}
	if status != http.StatusOK {
		return nil, first, fmt.Errorf("work of %s: %d %s", a.machine, status, trim(body))
	}
	if string(bytes.TrimSpace(body)) == "[]" {
		return nil, first, nil
	}
	return body, first, nil
}

// handedIn reads the units of a work answer.
func handedIn(machine string, body []byte) ([]handed, error) {
	var work []handed
	if err := json.Unmarshal(body, &work); err != nil {
		return nil, fmt.Errorf("work of %s: %w", machine, err)
	}
	return work, nil
}

// report sends the results of a run, as an agent does.
func (a *rawAgent) report(ctx context.Context, reps []engine.Report) error {
	body, err := json.Marshal(reps)
	if err != nil {
		return err
	}
	status, answer, _, err := a.do(ctx, http.MethodPost, "/v1/agent/results?machine="+url.QueryEscape(a.machine), body)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("results of %s: %d %s", a.machine, status, trim(answer))
	}
	return err
}

func trim(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}
