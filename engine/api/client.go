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
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/charm"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
)

// Client talks to a control plane through any of its nodes, moving on to
// the next address when one does not answer.
type Client struct {
	addrs []string
	token string
	http  *http.Client

	mu   sync.Mutex
	next int
	// join and credential are an agent's join token and machine
	// credential; save keeps a new credential (see UseCredential).
	join, credential string
	save             func(token string) error
	// reveal asks the reads that carry secrets for their values
	// (?reveal=1, operator only).
	reveal bool
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
	return &Client{addrs: clean, token: token, http: hc}
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
func (c *Client) do(ctx context.Context, method, path string, body []byte, out any) (http.Header, error) {
	if len(c.addrs) == 0 {
		return nil, errors.New("no control plane address: pass --controller or set FIXPOINT_ADDR")
	}
	var errs []string
	var last error
	c.mu.Lock()
	start := c.next
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
func (c *Client) Do(ctx context.Context, method, path string, body []byte, out any) error {
	_, err := c.do(ctx, method, path, body, out)
	return err
}

func (c *Client) postJSON(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	_, err = c.do(ctx, http.MethodPost, path, body, out)
	return err
}

// Status returns the environment's status. With index > 0 it blocks until
// the state moves past index or wait passes.
func (c *Client) Status(ctx context.Context, stale bool, index uint64, wait time.Duration) (*engine.Status, error) {
	var st engine.Status
	_, err := c.do(ctx, http.MethodGet, "/v1/status"+query(stale, index, wait), nil, &st)
	return &st, err
}

// WaitStatus returns the status once it moved past prev (nil: at once): a
// new entry, or a change without one (a claim taken or ended, a unit
// settling), which prev's generation tells the server about. It returns
// prev's equal after wait if nothing moved.
func (c *Client) WaitStatus(ctx context.Context, stale bool, prev *engine.Status, wait time.Duration) (*engine.Status, error) {
	if prev == nil {
		return c.Status(ctx, stale, 0, 0)
	}
	var st engine.Status
	_, err := c.do(ctx, http.MethodGet, statusWaitPath(stale, prev.Index, prev.Generation, wait, false), nil, &st)
	return &st, err
}

// WaitSummary is WaitStatus for the status summary (GET
// /v1/status?summary=1): what a waiter polls, whose size does not grow
// with the units.
func (c *Client) WaitSummary(ctx context.Context, stale bool, prev *engine.Summary, wait time.Duration) (*engine.Summary, error) {
	var sum engine.Summary
	path := "/v1/status?summary=1"
	switch {
	case prev != nil:
		path = statusWaitPath(stale, prev.Index, prev.Generation, wait, true)
	case stale:
		path += "&stale"
	}
	_, err := c.do(ctx, http.MethodGet, path, nil, &sum)
	return &sum, err
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
func (c *Client) SetReveal(on bool) {
	c.mu.Lock()
	c.reveal = on
	c.mu.Unlock()
}

// withReveal adds reveal=1 to path when the client reveals.
func (c *Client) withReveal(path string) string {
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

// State returns the whole replicated state.
func (c *Client) State(ctx context.Context, stale bool) (*model.State, error) {
	st := model.NewState()
	_, err := c.do(ctx, http.MethodGet, c.withReveal("/v1/state"+query(stale, 0, 0)), nil, st)
	st.Normalize()
	return st, err
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

// Deploy makes env desired; charms must have been uploaded.
func (c *Client) Deploy(ctx context.Context, d *model.Deploy) (*model.Response, error) {
	var resp model.Response
	err := c.postJSON(ctx, "/v1/deploy", d, &resp)
	return &resp, err
}

// Plan asks the control plane what deploying d would change, without
// proposing it (POST /v1/plan).
func (c *Client) Plan(ctx context.Context, d *model.Deploy) (*Plan, error) {
	var p Plan
	err := c.postJSON(ctx, "/v1/plan", d, &p)
	return &p, err
}

// Resolved marks a unit in error resolved.
func (c *Client) Resolved(ctx context.Context, unit string, noRetry bool) error {
	return c.postJSON(ctx, "/v1/resolved", Resolve{Unit: unit, NoRetry: noRetry}, nil)
}

// ResolveBatch marks every unit of service in error resolved, or with
// service "" every unit in error, as one command; the answer lists the
// units marked (model.Response.Resolved).
func (c *Client) ResolveBatch(ctx context.Context, service string, noRetry bool) (*model.Response, error) {
	var resp model.Response
	err := c.postJSON(ctx, "/v1/resolved", Resolve{Service: service, All: service == "", NoRetry: noRetry}, &resp)
	return &resp, err
}

// Universe returns what unit's hook would be given now.
func (c *Client) Universe(ctx context.Context, unit string) (json.RawMessage, error) {
	var raw json.RawMessage
	_, err := c.do(ctx, http.MethodGet, c.withReveal("/v1/universe/"+escapeUnit(unit)), nil, &raw)
	return raw, err
}

// Unit returns one unit's detail (GET /v1/units/UNIT).
func (c *Client) Unit(ctx context.Context, name string) (*engine.UnitDetail, error) {
	var d engine.UnitDetail
	_, err := c.do(ctx, http.MethodGet, c.withReveal("/v1/units/"+escapeUnit(name)), nil, &d)
	return &d, err
}

// ServiceConfig returns a service's effective config (GET
// /v1/services/SERVICE/config).
func (c *Client) ServiceConfig(ctx context.Context, service string) (*ServiceConfig, error) {
	var sc ServiceConfig
	_, err := c.do(ctx, http.MethodGet, c.withReveal("/v1/services/"+url.PathEscape(service)+"/config"), nil, &sc)
	return &sc, err
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

// Explain says why unit is stale, settled or in error (GET
// /v1/explain/UNIT).
func (c *Client) Explain(ctx context.Context, unit string) (*engine.Explanation, error) {
	var e engine.Explanation
	_, err := c.do(ctx, http.MethodGet, c.withReveal("/v1/explain/"+escapeUnit(unit)), nil, &e)
	return &e, err
}

// Logs returns the leader's recent hook runs of unit (a unit, a service, or
// "" for all) after run number after, the last limit of them (0: all kept).
// With wait > 0 it blocks until there is one or wait passes.
func (c *Client) Logs(ctx context.Context, unit string, after uint64, limit int, wait time.Duration) (*Logs, error) {
	v := url.Values{}
	if unit != "" {
		v.Set("unit", unit)
	}
	v.Set("after", strconv.FormatUint(after, 10))
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	if wait > 0 {
		v.Set("wait", wait.String())
	}
	var out Logs
	_, err := c.do(ctx, http.MethodGet, c.withReveal("/v1/logs?"+v.Encode()), nil, &out)
	return &out, err
}

// UploadCharm sends a packed charm archive, unless the node has it.
func (c *Client) UploadCharm(ctx context.Context, hash, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	_, err = c.do(ctx, http.MethodPut, "/v1/charms/"+hash, data, nil)
	return err
}

// Register records machine with its address and switches the client to
// the machine's new credential (agent).
//
// It presents the machine's credential when it holds one: only that renews
// a registered machine. When the control plane no longer knows the
// credential (the operator ran `fixpoint machine reset`), it registers
// with the join token and keeps the new credential through save.
func (c *Client) Register(ctx context.Context, machine, address string) error {
	c.mu.Lock()
	if c.join == "" {
		c.join = c.token
	}
	cred, join, save := c.credential, c.join, c.save
	c.mu.Unlock()
	body := Register{Machine: machine, Address: address}
	var reg Registered
	if cred != "" {
		c.setToken(cred)
		err := c.postJSON(ctx, "/v1/agent/register", body, &reg)
		if err == nil || !errors.Is(err, ErrUnauthorized) {
			return err
		}
	}
	c.setToken(join)
	if err := c.postJSON(ctx, "/v1/agent/register", body, &reg); err != nil {
		return err
	}
	c.mu.Lock()
	c.credential = reg.Token
	c.mu.Unlock()
	c.setToken(reg.Token)
	if save != nil {
		if err := save(reg.Token); err != nil {
			return fmt.Errorf("keep the credential of machine %s: %w (without it, a restarted agent needs `fixpoint machine reset %s`)", machine, err, machine)
		}
	}
	return nil
}

// UseCredential makes an agent's client present credential (may be "")
// when it registers, and hand every new credential to save, which keeps
// it for the agent's next start. The token given to NewClient is then
// the join token.
func (c *Client) UseCredential(credential string, save func(token string) error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.join == "" {
		c.join = c.token
	}
	c.credential, c.save = credential, save
}

func (c *Client) setToken(token string) {
	c.mu.Lock()
	c.token = token
	c.mu.Unlock()
}

// Claim long-polls for machine's stale units (agent). Each unit's
// universe comes back decoded and, in UniverseJSON, as the bytes the
// server sent, which the agent passes to the hook without encoding them
// again.
func (c *Client) Claim(ctx context.Context, machine string, max int, wait time.Duration) ([]wire.Work, error) {
	// The outer Universe field shadows the embedded one, so the first
	// pass only delimits each universe.
	var raw []struct {
		wire.Work
		Universe json.RawMessage `json:"universe"`
	}
	path := fmt.Sprintf("/v1/agent/work?machine=%s&max=%d&wait=%s", url.QueryEscape(machine), max, wait)
	// The control plane answers by the wait; past it and the grace, the
	// answer is held on the way and the poll is asked again.
	pctx, cancel := context.WithTimeout(ctx, wait+pollGrace(wait))
	defer cancel()
	if _, err := c.do(pctx, http.MethodGet, path, nil, &raw); err != nil {
		if ctx.Err() == nil && errors.Is(pctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w (%s and %s): its answer is held on the way", ErrPollTimeout, wait, pollGrace(wait))
		}
		return nil, err
	}
	work := make([]wire.Work, len(raw))
	for i, w := range raw {
		work[i] = w.Work
		if len(w.Universe) == 0 || string(w.Universe) == "null" {
			return nil, fmt.Errorf("work for %s: unit %q came without its universe", machine, w.Unit)
		}
		var uni charmapi.Universe
		if err := json.Unmarshal(w.Universe, &uni); err != nil {
			return nil, fmt.Errorf("work for %s: universe of %s: %w", machine, w.Unit, err)
		}
		work[i].Universe, work[i].UniverseJSON = &uni, w.Universe
	}
	return work, nil
}

// Heartbeat tells the control plane machine's agent is alive and which
// units it is running (agent); it returns those of them that are no longer
// placed on the machine.
func (c *Client) Heartbeat(ctx context.Context, machine string, running []string) ([]string, error) {
	if running == nil {
		running = []string{}
	}
	var reply HeartbeatReply
	err := c.postJSON(ctx, "/v1/agent/heartbeat?machine="+url.QueryEscape(machine), Heartbeat{Running: running}, &reply)
	return reply.Gone, err
}

// Released asks which of the units whose storage machine's agent keeps
// (kept) the control plane no longer places on the machine, answered
// from the latest committed state (agent).
func (c *Client) Released(ctx context.Context, machine string, kept []string) ([]string, error) {
	var reply HeartbeatReply
	err := c.postJSON(ctx, "/v1/agent/heartbeat?machine="+url.QueryEscape(machine), Heartbeat{Kept: kept}, &reply)
	return reply.Released, err
}

// Report posts finished runs (agent).
func (c *Client) Report(ctx context.Context, machine string, reports []wire.Report) error {
	return c.postJSON(ctx, "/v1/agent/results?machine="+url.QueryEscape(machine), reports, nil)
}

// FetchCharm downloads a charm archive and unpacks it into dir, checking
// its content hash (agent).
func (c *Client) FetchCharm(ctx context.Context, hash, dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(dir), ".fetch-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = c.do(ctx, http.MethodGet, "/v1/charms/"+hash, nil, &limitWriter{w: f, n: charm.MaxSize})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return charm.Unpack(f.Name(), hash, dir)
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
