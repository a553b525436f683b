package forward

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/fixpoint/fixpoint/model/fault"
)

// Header marks a request one node sent another on a caller's behalf; its
// value is the sending node's id. A node receiving one answers it itself or
// refuses, never passes it on again, so a stale idea of who leads can not
// make a request bounce between followers.
const Header = "X-Fixpoint-Forwarded-By"

// Forwarded reports whether another node sent r.
func Forwarded(r *http.Request) bool { return r.Header.Get(Header) != "" }

// maxIdlePerHost is how many idle connections a node keeps to each other
// node. Go's default of 2 made a follower under 64 concurrent writers open
// a connection for about every other write (11,000 sockets in TIME-WAIT in
// a 20k-write run); the pool must hold as many as there are requests in
// flight to the leader.
const maxIdlePerHost = 256

// NewTransport returns the pooled transport every node-to-node request
// shares, over TLS with a copy of conf when it is not nil. It sets no
// response timeout: long polls pass through it; bound requests with their
// context or the http.Client's Timeout.
//
// The transport has a copy because an http.Transport adds "h2" to the
// NextProtos of its TLS config at its first request: given the config a
// node's API listener also serves with, that would start offering HTTP/2
// to every client from then on.
func NewTransport(conf *tls.Config) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.MaxIdleConns = 4 * maxIdlePerHost
	tr.MaxIdleConnsPerHost = maxIdlePerHost
	tr.IdleConnTimeout = 90 * time.Second
	if conf != nil {
		tr.TLSClientConfig = conf.Clone()
	}
	return tr
}

// URL makes a URL of an address that is host:port or a URL, and a path.
func URL(addr, path string) string {
	if strings.Contains(addr, "://") {
		return strings.TrimRight(addr, "/") + path
	}
	return "http://" + addr + path
}

// maxAnswer bounds an error answer read from another node.
const maxAnswer = 1 << 20

// Client sends this node's requests to other nodes. Its http.Client
// carries the node's credentials and should use a NewTransport.
type Client struct {
	http *http.Client
	node string
}

// NewClient returns a client for the node with id node.
func NewClient(hc *http.Client, node string) *Client {
	return &Client{http: hc, node: node}
}

// Call sends a request of this node's own to the node at addr, which may
// pass it on to the leader, and decodes a JSON answer into out (when out is
// not nil). An error answer comes back as *fault.Error.
func (c *Client) Call(ctx context.Context, method, addr, path string, body []byte, out any) error {
	return c.send(ctx, false, method, addr, path, body, out)
}

// Forward is Call for a request this node passes on for a caller: the
// receiver answers it itself or refuses.
func (c *Client) Forward(ctx context.Context, method, addr, path string, body []byte, out any) error {
	return c.send(ctx, true, method, addr, path, body, out)
}

func (c *Client) send(ctx context.Context, fwd bool, method, addr, path string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, URL(addr, path), rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req, fwd)
	if err != nil {
		return err
	}
	defer Close(resp)
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decode answer of %s: %w", URL(addr, path), err)
	}
	return nil
}

// Do sends req, marked as forwarded when fwd. A 2xx answer is returned for
// the caller to read and Close; any other comes back as *fault.Error, its body
// read and closed.
func (c *Client) Do(req *http.Request, fwd bool) (*http.Response, error) {
	if fwd {
		req.Header.Set(Header, c.node)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
		Close(resp)
		return nil, fault.Decode(resp.StatusCode, b)
	}
	return resp, nil
}

// Close drains what is left of resp's body before closing it: a body
// closed unread (even just a JSON decoder's trailing newline) costs the
// connection, and the next request dials a new one.
func Close(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
	_ = resp.Body.Close()
}

// Proxy passes callers' requests to the leader as they are, their own
// credentials included, and relays the answer. Writes with small bodies
// from concurrent callers share requests to the leader (see ServeBatch);
// anything else is streamed through a reverse proxy.
type Proxy struct {
	transport http.RoundTripper
	client    *http.Client
	node      string

	mu       sync.Mutex
	proxies  map[string]*httputil.ReverseProxy
	batchers map[string]*batcher
}

// NewProxy returns a proxy sending through transport (a NewTransport,
// without the node's credentials) on behalf of node. Batches go through
// client, which carries the node's credentials (the leader takes batches
// only from other nodes); with a nil client nothing is batched.
func NewProxy(transport http.RoundTripper, client *http.Client, node string) *Proxy {
	return &Proxy{transport: transport, client: client, node: node,
		proxies: map[string]*httputil.ReverseProxy{}, batchers: map[string]*batcher{}}
}

// Serve passes r to the node at addr and relays its answer to w; a node
// that does not answer is a bad_gateway envelope.
func (p *Proxy) Serve(w http.ResponseWriter, r *http.Request, addr string) {
	if p.client != nil && batchable(r) && p.serveBatched(w, r, addr) {
		return
	}
	rp, err := p.to(addr)
	if err != nil {
		fault.Write(w, fault.Errorf(fault.KindInternal, "leader address %q: %v", addr, err))
		return
	}
	rp.ServeHTTP(w, r)
}

// batcherFor returns the batcher to addr, made once per address.
func (p *Proxy) batcherFor(addr string) *batcher {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b := p.batchers[addr]; b != nil {
		return b
	}
	// Leaders change rarely; a handful of addresses over a node's life.
	// A batcher dropped here finishes its batches on its own.
	if len(p.batchers) > 64 {
		clear(p.batchers)
	}
	b := &batcher{addr: addr, client: p.client, node: p.node}
	p.batchers[addr] = b
	return b
}

// bodyError is the caller's error when forwarding r failed with err
// because r's body is over the cap the node's API put on it: 413, which
// no retry or other node cures, rather than a gateway's 502. It is nil
// for any other failure.
func bodyError(r *http.Request, err error) *fault.Error {
	var tooLarge *http.MaxBytesError
	if !errors.As(err, &tooLarge) {
		return nil
	}
	return fault.Errorf(fault.KindTooLarge, "%s %s: the request body is larger than the %d-byte cap", r.Method, r.URL.Path, tooLarge.Limit)
}

// bufferPool lends the reverse proxies their copy buffers.
type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() []byte {
	if v, ok := b.p.Get().(*[]byte); ok {
		return *v
	}
	return make([]byte, 32<<10)
}

func (b *bufferPool) Put(buf []byte) { b.p.Put(&buf) }

var copyBuffers = &bufferPool{}

// to returns the reverse proxy to addr, made once per address.
func (p *Proxy) to(addr string) (*httputil.ReverseProxy, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if rp := p.proxies[addr]; rp != nil {
		return rp, nil
	}
	target, err := url.Parse(URL(addr, ""))
	if err != nil {
		return nil, err
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Header.Set(Header, p.node)
		},
		Transport: p.transport,
		// Without a pool the proxy allocates a 32 KiB copy buffer for
		// every answer it relays: one per forwarded write.
		BufferPool: copyBuffers,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if e := bodyError(r, err); e != nil {
				fault.Write(w, e)
				return
			}
			e := fault.Errorf(fault.KindBadGateway, "forward %s %s to leader %s: %v", r.Method, r.URL.Path, addr, err)
			e.Leader, e.Node = addr, p.node
			fault.Write(w, e)
		},
	}
	// Leaders change rarely; a handful of addresses over a node's life.
	if len(p.proxies) > 64 {
		clear(p.proxies)
	}
	p.proxies[addr] = rp
	return rp, nil
}
