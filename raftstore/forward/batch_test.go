package forward

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/model/fault"
)

func sampleBatch() []wireRequest {
	return []wireRequest{
		{method: "POST", target: "/v1/agent/register", header: http.Header{"Authorization": {"Bearer a"}, "Content-Type": {"application/json"}}, body: []byte(`{"machine":"m1"}`)},
		{method: "POST", target: "/v1/agent/results?machine=m2", header: http.Header{}, body: []byte{}},
	}
}

func TestBatchWireRoundTrip(t *testing.T) {
	reqs := sampleBatch()
	got, err := decodeBatch(appendBatch(nil, reqs))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, reqs) {
		t.Errorf("decoded %+v, want %+v", got, reqs)
	}
	as := []wireAnswer{{status: 200, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(`{}`)}, {status: 409, header: http.Header{}, body: []byte{}}}
	back, err := decodeAnswers(appendAnswers(nil, as), 2)
	if err != nil || !reflect.DeepEqual(back, as) {
		t.Errorf("answers: %+v, %v", back, err)
	}
	if _, err := decodeAnswers(appendAnswers(nil, as), 3); !errors.Is(err, errBatch) {
		t.Errorf("two answers to three requests: %v", err)
	}
}

// Every bound and shape rule refuses its batch with errBatch.
func TestBatchWireRefusesMalformed(t *testing.T) {
	ok := appendBatch(nil, sampleBatch())
	with := func(r wireRequest) []byte { return appendBatch(nil, []wireRequest{r}) }
	many := binary.AppendUvarint(nil, maxMembers+1)
	cases := map[string][]byte{
		"empty":           {},
		"cut short":       ok[:len(ok)-3],
		"trailing bytes":  append(append([]byte{}, ok...), 0),
		"too many":        many,
		"lower-case verb": with(wireRequest{method: "post", target: "/x", header: http.Header{}}),
		"no verb":         with(wireRequest{method: "", target: "/x", header: http.Header{}}),
		"relative target": with(wireRequest{method: "GET", target: "x", header: http.Header{}}),
		"scheme-relative": with(wireRequest{method: "GET", target: "//evil/x", header: http.Header{}}),
		"header CRLF":     with(wireRequest{method: "GET", target: "/x", header: http.Header{"A": {"b\r\nC: d"}}}),
		"header name":     with(wireRequest{method: "GET", target: "/x", header: http.Header{"A B": {"c"}}}),
		"long target":     with(wireRequest{method: "GET", target: "/" + strings.Repeat("x", maxTarget), header: http.Header{}}),
		"over the cap":    make([]byte, maxBatchBytes+1),
	}
	for name, data := range cases {
		if _, err := decodeBatch(data); !errors.Is(err, errBatch) {
			t.Errorf("%s: %v, want a malformed batch", name, err)
		}
	}
}

// FuzzBatch: no input panics the decoders, whatever decodes encodes back
// to the same requests, and a follower's check (fits) takes every member
// the leader's decoder takes.
func FuzzBatch(f *testing.F) {
	f.Add(appendBatch(nil, sampleBatch()))
	f.Add(appendAnswers(nil, []wireAnswer{{status: 200, header: http.Header{"X": {"y"}}, body: []byte("z")}}))
	f.Add([]byte{1, 4, 'P', 'O', 'S', 'T'})
	f.Fuzz(func(t *testing.T, data []byte) {
		if reqs, err := decodeBatch(data); err == nil {
			again, err := decodeBatch(appendBatch(nil, reqs))
			if err != nil || len(again) != len(reqs) {
				t.Fatalf("re-decoding %d members: %d, %v", len(reqs), len(again), err)
			}
			for i := range reqs {
				if !fits(reqs[i]) {
					t.Fatalf("member %d decodes but a follower would not send it: %+v", i, reqs[i])
				}
				if again[i].method != reqs[i].method || again[i].target != reqs[i].target ||
					!bytes.Equal(again[i].body, reqs[i].body) || len(again[i].header) != len(reqs[i].header) {
					t.Fatalf("member %d changed: %+v -> %+v", i, reqs[i], again[i])
				}
			}
		}
		if len(data) > 0 {
			_, _ = decodeAnswers(data, int(data[0]))
		}
	})
}

// leaderStub is a leader's API: members are checked by their own token,
// and answer with what they saw; BatchPath takes only the node token.
type leaderStub struct {
	batches, members atomic.Int64
	gate             chan struct{} // when not nil, members wait for it to close
}

const nodeToken = "node-token"

func (l *leaderStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == BatchPath {
		if r.Header.Get("Authorization") != "Bearer "+nodeToken {
			fault.Write(w, fault.Errorf(fault.KindUnauthorized, "batches come from nodes"))
			return
		}
		l.batches.Add(1)
		ServeBatch(w, r, l)
		return
	}
	l.members.Add(1)
	if l.gate != nil {
		<-l.gate
	}
	if r.Header.Get("Authorization") == "Bearer refuse" {
		e := fault.Errorf(fault.KindForbidden, "not yours")
		e.Node = "n1"
		fault.Write(w, e)
		return
	}
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("X-Seen", fmt.Sprintf("%s %s by=%s from=%s auth=%s", r.Method, r.URL.RequestURI(), r.Header.Get(Header), r.Header.Get("X-Forwarded-For"), r.Header.Get("Authorization")))
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(body)
}

type tokenTransport struct{ base http.RoundTripper }

func (t tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+nodeToken)
	return t.base.RoundTrip(r)
}

// follower serves every request by passing it to the leader at addr
// through p, as a follower's leader-only routes do.
func follower(p *Proxy, addr string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.Serve(w, r, addr) }))
}

// stubbedFollower is a follower's proxy in front of a stub leader, both
// closed when the test ends.
func stubbedFollower(t *testing.T) (*leaderStub, *httptest.Server) {
	stub := &leaderStub{}
	leader := httptest.NewServer(stub)
	t.Cleanup(leader.Close)
	f := follower(newTestProxy(t), leader.URL)
	t.Cleanup(f.Close)
	return stub, f
}

func newTestProxy(t *testing.T) *Proxy {
	tr := NewTransport(nil)
	t.Cleanup(tr.CloseIdleConnections)
	return NewProxy(tr, &http.Client{Transport: tokenTransport{tr}}, "n2")
}

func postAs(t *testing.T, url, token, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// Concurrent writes through a follower share batches; each comes back
// with its own answer, its own credentials having reached the leader, and
// marked as forwarded by the follower.
func TestProxyBatchesConcurrentWrites(t *testing.T) {
	stub := &leaderStub{gate: make(chan struct{})}
	leader := httptest.NewServer(stub)
	defer leader.Close()
	p := newTestProxy(t)
	f := follower(p, leader.URL)
	defer f.Close()

	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token := fmt.Sprintf("t%d", i)
			resp, body := postAs(t, fmt.Sprintf("%s/v1/agent/register?i=%d", f.URL, i), token, fmt.Sprintf("body %d", i))
			seen := resp.Header.Get("X-Seen")
			want := fmt.Sprintf("POST /v1/agent/register?i=%d by=n2 from=127.0.0.1 auth=Bearer %s", i, token)
			if resp.StatusCode != http.StatusCreated || body != fmt.Sprintf("body %d", i) || seen != want {
				errs <- fmt.Errorf("write %d: %d %q, seen %q, want %q", i, resp.StatusCode, body, seen, want)
			}
		}()
	}
	// Hold the leader until every write is either at it or queued at the
	// follower: the queued ones must then go in few batches.
	b := p.batcherFor(leader.URL)
	deadline := time.Now().Add(20 * time.Second)
	for {
		b.mu.Lock()
		queued := len(b.queue)
		b.mu.Unlock()
		if int(stub.members.Load())+queued == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writes at the leader, %d queued, want %d in all", stub.members.Load(), queued, n)
		}
		time.Sleep(time.Millisecond)
	}
	close(stub.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// At most maxInflight batches held at the leader, then each takes
	// all that queued meanwhile.
	if got := stub.batches.Load(); got > 2*maxInflight {
		t.Errorf("%d writes took %d batches, want at most %d", n, got, 2*maxInflight)
	}
	if got := stub.members.Load(); got != n {
		t.Errorf("the leader served %d members, want %d", got, n)
	}
}

// A refusal comes back as the leader's typed envelope; reads are
// streamed, not batched; a nested batch is refused.
func TestProxyBatchAnswersAndStreams(t *testing.T) {
	stub, f := stubbedFollower(t)

	resp, body := postAs(t, f.URL+"/v1/agent/register", "refuse", "{}")
	e := fault.Decode(resp.StatusCode, []byte(body))
	if resp.StatusCode != http.StatusForbidden || !errors.Is(e, fault.ErrForbidden) || e.Node != "n1" {
		t.Errorf("refusal through the batch: %d %+v", resp.StatusCode, e)
	}
	if stub.batches.Load() != 1 {
		t.Errorf("%d batches for one write, want 1", stub.batches.Load())
	}
	get, err := http.Get(f.URL + "/v1/agent/work")
	if err != nil {
		t.Fatal(err)
	}
	Close(get)
	if get.StatusCode != http.StatusCreated || stub.batches.Load() != 1 || stub.members.Load() != 2 {
		t.Errorf("a read: %d, %d batches, %d served; want it streamed", get.StatusCode, stub.batches.Load(), stub.members.Load())
	}
	// However its path is spelt: the router decodes escapes.
	for _, target := range []string{BatchPath, "/v1/forward/%62atch", "/v1/forward//batch", "/v1/forward/./batch?x=1", "/v1/forward/batch/"} {
		nested := appendBatch(nil, []wireRequest{{method: "POST", target: target, header: http.Header{"Authorization": {"Bearer " + nodeToken}}, body: appendBatch(nil, sampleBatch())}})
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, BatchPath, bytes.NewReader(nested))
		ServeBatch(rec, req, stub)
		as, err := decodeAnswers(rec.Body.Bytes(), 1)
		if err != nil || as[0].status != http.StatusBadRequest || stub.batches.Load() != 1 {
			t.Errorf("a batch in a batch as %s: %+v, %v; %d batches served", target, as, err, stub.batches.Load())
		}
	}
	rec := httptest.NewRecorder()
	ServeBatch(rec, httptest.NewRequest(http.MethodPost, BatchPath, strings.NewReader("junk")), stub)
	if rec.Code != http.StatusBadRequest {
		t.Errorf("a malformed batch: %d", rec.Code)
	}
}

// A leader that takes no batches (an older version: 404) still gets
// every write, streamed, and is sent no batch for a while.
func TestProxyFallsBackWithoutBatches(t *testing.T) {
	var batches, plain atomic.Int64
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == BatchPath {
			batches.Add(1)
			http.NotFound(w, r)
			return
		}
		plain.Add(1)
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(b)
	}))
	defer leader.Close()
	p := newTestProxy(t)
	f := follower(p, leader.URL)
	defer f.Close()
	for i := range 3 {
		resp, body := postAs(t, f.URL+"/v1/agent/register", "t", fmt.Sprintf("w%d", i))
		if resp.StatusCode != http.StatusOK || body != fmt.Sprintf("w%d", i) {
			t.Errorf("write %d: %d %q", i, resp.StatusCode, body)
		}
	}
	if batches.Load() != 1 || plain.Load() != 3 {
		t.Errorf("%d batches, %d streamed; want 1 refused batch and 3 streamed", batches.Load(), plain.Load())
	}
}

// A leader that does not answer is a bad_gateway envelope naming it.
func TestProxyBatchLeaderDown(t *testing.T) {
	leader := httptest.NewServer(http.NotFoundHandler())
	addr := leader.URL
	leader.Close()
	p := newTestProxy(t)
	f := follower(p, addr)
	defer f.Close()
	resp, body := postAs(t, f.URL+"/v1/agent/register", "t", "{}")
	e := fault.Decode(resp.StatusCode, []byte(body))
	if resp.StatusCode != http.StatusBadGateway || !errors.Is(e, fault.ErrBadGateway) || e.Leader != addr || e.Node != "n2" {
		t.Errorf("leader down: %d %+v", resp.StatusCode, e)
	}
}

// A caller whose request ends while its batch is at the leader (a node
// shutting down cancels every request) gets an envelope saying the outcome
// is unknown, never net/http's empty 200.
func TestProxyBatchCallerGone(t *testing.T) {
	stub := &leaderStub{gate: make(chan struct{})}
	leader := httptest.NewServer(stub)
	defer leader.Close()
	defer close(stub.gate)
	p := newTestProxy(t)
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/agent/register", strings.NewReader("{}"))
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Serve(rec, req, leader.URL)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for stub.members.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the write never reached the leader")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	e := fault.Decode(rec.Code, rec.Body.Bytes())
	if rec.Code != http.StatusServiceUnavailable || !errors.Is(e, fault.ErrUnavailable) || e.Leader != leader.URL {
		t.Errorf("caller gone: %d %+v", rec.Code, e)
	}
}

// A write with a header over a batch's bounds is sent alone, streamed,
// and the others keep their batches.
func TestProxyStreamsWhatDoesNotFit(t *testing.T) {
	stub, f := stubbedFollower(t)
	req, _ := http.NewRequest(http.MethodPost, f.URL+"/v1/agent/register", strings.NewReader("big"))
	req.Header.Set("X-Long", strings.Repeat("v", maxHeaderValue+1))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	Close(resp)
	if resp.StatusCode != http.StatusCreated || stub.batches.Load() != 0 || stub.members.Load() != 1 {
		t.Errorf("an oversized header: %d, %d batches, %d served; want it streamed", resp.StatusCode, stub.batches.Load(), stub.members.Load())
	}
	if resp, _ := postAs(t, f.URL+"/v1/agent/register", "t", "small"); resp.StatusCode != http.StatusCreated || stub.batches.Load() != 1 {
		t.Errorf("the next write: %d, %d batches; want it batched", resp.StatusCode, stub.batches.Load())
	}
}
