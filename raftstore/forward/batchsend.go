package forward

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/fixpoint/fixpoint/model/fault"
)

// What a node batches, and how.
const (
	// maxBatchedBody is the largest body that rides in a batch; a larger
	// one is sent on its own, streamed.
	maxBatchedBody = 64 << 10
	// maxInflight is how many batches a node keeps in flight to one
	// leader. A request that finds them all under way waits for the next
	// batch, which takes everything that queued meanwhile: under light
	// load each request goes at once and alone, under heavy load batches
	// grow with the wait instead of with a timer. One is what measured
	// best (bench/README.md, "raft writes"): with 64 writers through a
	// follower on a busy 2-core box, three alternating pairs cost 470,
	// 503 and 555 µs of CPU per write in all with 1 in flight against
	// 558, 621 and 505 with 2 (4 and 8 cost more still): fewer, larger
	// batches also make larger Raft batches (24 writes per leader fsync
	// against 17).
	maxInflight = 1
	// batchTimeout bounds one batch's round trip, as the node-to-node
	// client's timeout bounds any other request.
	batchTimeout = time.Minute
	// noBatchFor is how long a node sends a leader no batches after it
	// refused one (an older version without BatchPath, or credentials it
	// does not take): its members, and the requests meanwhile, go on
	// their own.
	noBatchFor = time.Minute
)

// errNoBatch means the leader refused the batch as a whole; its members
// are to be sent on their own.
var errNoBatch = errors.New("the leader takes no batches")

// member is one caller's request waiting in or for a batch.
type member struct {
	req  wireRequest
	size int // its encoded size, about
	done chan struct{}
	ans  wireAnswer
	err  error
}

// batcher sends the batches to one leader address.
type batcher struct {
	addr   string
	client *http.Client
	node   string

	mu       sync.Mutex
	queue    []*member
	inflight int
	off      time.Time // no batches before then
}

// enabled reports whether the leader takes batches, as far as b knows.
func (b *batcher) enabled() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.off.IsZero() || time.Now().After(b.off)
}

// add queues m and starts a batch if fewer than maxInflight are under way;
// m.done closes when m has its answer or error.
func (b *batcher) add(m *member) {
	b.mu.Lock()
	b.queue = append(b.queue, m)
	var batch []*member
	if b.inflight < maxInflight {
		batch = b.take()
		b.inflight++
	}
	b.mu.Unlock()
	if batch != nil {
		go b.run(batch)
	}
}

// take removes the next batch from the queue: as many members as the
// bounds of a batch allow, at least one. b.mu is held.
func (b *batcher) take() []*member {
	n, size := 0, 16
	for n < len(b.queue) && n < maxMembers {
		if n > 0 && size+b.queue[n].size > maxBatchBytes {
			break
		}
		size += b.queue[n].size
		n++
	}
	batch := make([]*member, n)
	copy(batch, b.queue[:n])
	rest := copy(b.queue, b.queue[n:])
	clear(b.queue[rest:])
	b.queue = b.queue[:rest]
	return batch
}

// run sends batch, then the batches that queued meanwhile while there
// are any.
func (b *batcher) run(batch []*member) {
	for batch != nil {
		b.send(batch)
		b.mu.Lock()
		batch = nil
		if len(b.queue) > 0 {
			batch = b.take()
		} else {
			b.inflight--
		}
		b.mu.Unlock()
	}
}

// send sends one batch and hands each member its answer.
func (b *batcher) send(batch []*member) {
	answers, err := b.roundTrip(batch)
	for i, m := range batch {
		if err != nil {
			m.err = err
		} else {
			m.ans = answers[i]
		}
		close(m.done)
	}
}

func (b *batcher) roundTrip(batch []*member) ([]wireAnswer, error) {
	reqs := make([]wireRequest, len(batch))
	size := 16
	for i, m := range batch {
		reqs[i] = m.req
		size += m.size
	}
	body := appendBatch(make([]byte, 0, size), reqs)
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, URL(b.addr, BatchPath), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", batchType)
	req.Header.Set(Header, b.node)
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer Close(resp)
	if resp.StatusCode != http.StatusOK {
		b.mu.Lock()
		b.off = time.Now().Add(noBatchFor)
		b.mu.Unlock()
		return nil, fmt.Errorf("%w: %s", errNoBatch, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read the answer to a batch: %w", err)
	}
	return decodeAnswers(data, len(batch))
}

// batchable reports whether r may ride in a batch: a write with a small
// body of known length. Reads, long polls and uploads are streamed.
func batchable(r *http.Request) bool {
	return r.Method == http.MethodPost && r.ContentLength >= 0 && r.ContentLength <= maxBatchedBody &&
		r.Header.Get("Upgrade") == "" && r.Header.Get("Expect") == ""
}

// serveBatched sends r to the leader at addr in a batch and relays the
// answer. It reports false, with r's body put back, when r is to be
// streamed instead.
func (p *Proxy) serveBatched(w http.ResponseWriter, r *http.Request, addr string) bool {
	b := p.batcherFor(addr)
	if !b.enabled() {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBatchedBody+1))
	if err != nil {
		if e := bodyError(r, err); e != nil {
			fault.Write(w, e)
			return true
		}
		fault.Write(w, fault.Errorf(fault.KindBadRequest, "read the request body: %v", err))
		return true
	}
	if len(body) > maxBatchedBody {
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
		return false
	}
	m := &member{req: wireRequest{method: r.Method, target: r.URL.RequestURI(), header: outHeader(r), body: body}, done: make(chan struct{})}
	if !fits(m.req) {
		r.Body = io.NopCloser(bytes.NewReader(body))
		return false
	}
	m.size = len(m.req.method) + len(m.req.target) + len(body) + 16
	for k, vs := range m.req.header {
		for _, v := range vs {
			m.size += len(k) + len(v) + 8
		}
	}
	b.add(m)
	select {
	case <-m.done:
	case <-r.Context().Done():
		// The caller is gone, or the node is shutting down: its request
		// stays in the batch and its outcome is unknown. Say so rather
		// than let net/http answer an empty 200.
		e := fault.Errorf(fault.KindUnavailable, "forward %s %s to leader %s: %v before the leader answered", r.Method, r.URL.Path, addr, r.Context().Err())
		if errors.Is(r.Context().Err(), context.DeadlineExceeded) {
			e = fault.Errorf(fault.KindTimeout, "forward %s %s to leader %s: %v before the leader answered", r.Method, r.URL.Path, addr, r.Context().Err())
		}
		e.Leader, e.Node = addr, p.node
		fault.Write(w, e)
		return true
	}
	if errors.Is(m.err, errNoBatch) {
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		return false
	}
	if m.err != nil {
		e := fault.Errorf(fault.KindBadGateway, "forward %s %s to leader %s: %v", r.Method, r.URL.Path, addr, m.err)
		e.Leader, e.Node = addr, p.node
		fault.Write(w, e)
		return true
	}
	h := w.Header()
	for k, vs := range m.ans.header {
		if k != "Content-Length" {
			h[k] = vs
		}
	}
	w.WriteHeader(m.ans.status)
	_, _ = w.Write(m.ans.body)
	return true
}

// hopHeaders are the headers that concern one connection, which a proxy
// drops (RFC 9110, 7.6.1), as httputil.ReverseProxy does.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// outHeader is r's header as the leader gets it: without hop-by-hop
// headers, and with the caller's address in X-Forwarded-For for its logs.
func outHeader(r *http.Request) http.Header {
	h := r.Header.Clone()
	for _, f := range h.Values("Connection") {
		for _, k := range bytes.Split([]byte(f), []byte(",")) {
			h.Del(string(bytes.TrimSpace(k)))
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		h.Set("X-Forwarded-For", host)
	}
	return h
}
