package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fixpoint/fixpoint/engine/charm"
	"github.com/fixpoint/fixpoint/model/fault"
)

// Client talks to a control plane through any of its nodes, moving on to
// the next address when one does not answer. Its methods are those of
// the operator's, the agent's and the diagnostics' clients, which share
// its connection.
type Client struct {
	*conn
	OperatorClient
	AgentClient
	DiagClient
}

// conn is the core every client shares: it sends a request to any node,
// with the caller's credential, and turns error answers into *Error.
type conn struct {
	addrs []string
	token string
	http  *http.Client

	mu   sync.Mutex
	next int
	// reveal asks the reads that carry secrets for their values
	// (?reveal=1, operator only).
	reveal bool
	// env is the environment the environment-scoped requests go to, ""
	// the default one (client_env.go).
	env string
}

// NewClient returns a client for the given addresses (host:port or URLs).
func NewClient(addrs []string, token string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{}
	}
	var clean []string
	for _, a := range addrs {
		if a = strings.TrimSpace(a); a != "" {
			clean = append(clean, baseURL(a))
		}
	}
	c := &conn{addrs: clean, token: token, http: hc}
	return &Client{conn: c, OperatorClient: OperatorClient{c}, AgentClient: AgentClient{conn: c, id: &agentIdentity{}}, DiagClient: DiagClient{c}}
}

func baseURL(addr string) string {
	if strings.HasPrefix(addr, "http://") || strings.HasPrefix(addr, "https://") {
		return strings.TrimRight(addr, "/")
	}
	return "http://" + addr
}

// do sends one request, trying each node in turn on connection failures,
// 502s and 503s; body is re-sent from bytes. An error answer is an *Error
// (errors.Is ErrRefused, ErrNotRegistered, ...); when every node failed,
// the error wraps the last node's answer.
func (c *conn) do(ctx context.Context, method, path string, body []byte, out any) (http.Header, error) {
	if len(c.addrs) == 0 {
		return nil, errors.New("no control plane address: pass --controller or set FIXPOINT_ADDR")
	}
	var errs []string
	var last error
	c.mu.Lock()
	start := c.next
	path = envPath(c.env, method, path)
	c.mu.Unlock()
	for i := range c.addrs {
		n := (start + i) % len(c.addrs)
		addr := c.addrs[n]
		req, err := http.NewRequestWithContext(ctx, method, addr+path, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		token := c.token
		c.mu.Unlock()
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := c.http.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			last = err
			errs = append(errs, fmt.Sprintf("%s: %v", addr, unwrapURL(err)))
			continue
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			last = err
			errs = append(errs, fmt.Sprintf("%s: read response: %v", addr, err))
			continue
		}
		if resp.StatusCode >= 300 {
			e := fault.Decode(resp.StatusCode, data)
			if e.Node == "" {
				e.Node = addr
			}
			if resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusBadGateway {
				last = e
				errs = append(errs, fmt.Sprintf("%s: %s", addr, e.Message))
				continue
			}
			return resp.Header, e
		}
		c.mu.Lock()
		c.next = n
		c.mu.Unlock()
		if out != nil {
			if w, ok := out.(io.Writer); ok {
				_, err = w.Write(data)
				return resp.Header, err
			}
			if err := json.Unmarshal(data, out); err != nil {
				return resp.Header, fmt.Errorf("%s %s: decode response: %w", method, path, err)
			}
		}
		return resp.Header, nil
	}
	return nil, fmt.Errorf("no control-plane node could serve %s %s: %s: %w", method, path, strings.Join(errs, "; "), last)
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Do sends one request to the control plane: body as is, the response
// decoded into out (or copied, when out is an io.Writer).
func (c *conn) Do(ctx context.Context, method, path string, body []byte, out any) error {
	_, err := c.do(ctx, method, path, body, out)
	return err
}

func (c *conn) postJSON(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	_, err = c.do(ctx, http.MethodPost, path, body, out)
	return err
}

// statusWaitPath is the long poll for the status after index and
// generation.
func statusWaitPath(stale bool, index, generation uint64, wait time.Duration, summary bool) string {
	q := query(stale, max(index, 1), wait) + "&generation=" + strconv.FormatUint(generation, 10)
	if summary {
		q += "&summary=1"
	}
	return "/v1/status" + q
}

// SetReveal makes the reads that carry secrets (State, Universe, Unit,
// ServiceConfig, Logs, Explain) ask for their values rather than their
// redactions: the control plane allows it to the operator credential only.
func (c *conn) SetReveal(on bool) {
	c.mu.Lock()
	c.reveal = on
	c.mu.Unlock()
}

// withReveal adds reveal=1 to path when the client reveals.
func (c *conn) withReveal(path string) string {
	c.mu.Lock()
	on := c.reveal
	c.mu.Unlock()
	if !on {
		return path
	}
	if strings.Contains(path, "?") {
		return path + "&reveal=1"
	}
	return path + "?reveal=1"
}

func query(stale bool, index uint64, wait time.Duration) string {
	v := url.Values{}
	if stale {
		v.Set("stale", "")
	}
	if index > 0 {
		v.Set("index", strconv.FormatUint(index, 10))
		v.Set("wait", wait.String())
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + strings.ReplaceAll(v.Encode(), "stale=", "stale")
}

// escapeUnit escapes a unit's name for a path, keeping the "/" between
// its service and its number.
func escapeUnit(name string) string {
	svc, num, ok := strings.Cut(name, "/")
	if !ok {
		return url.PathEscape(name)
	}
	return url.PathEscape(svc) + "/" + url.PathEscape(num)
}

// tokenNow is the token the client presents now.
func (c *conn) tokenNow() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token
}

func (c *conn) setToken(token string) {
	c.mu.Lock()
	c.token = token
	c.mu.Unlock()
}

// limitWriter refuses to write more than n bytes.
type limitWriter struct {
	w io.Writer
	n int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, fmt.Errorf("archive larger than %d bytes", charm.MaxSize)
	}
	l.n -= int64(len(p))
	return l.w.Write(p)
}
