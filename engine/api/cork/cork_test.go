package cork

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api/cork/corktest"
)

// answer writes size bytes as one answer with its length, corked if
// asked to, as the work handler does.
func answer(size int, corked bool) http.HandlerFunc {
	body := bytes.Repeat([]byte("u"), size)
	return func(w http.ResponseWriter, r *http.Request) {
		if c := For(r); c != nil && corked {
			c.Cork()
			defer func() { _ = c.Uncork() }()
			defer func() { _ = http.NewResponseController(w).Flush() }()
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}
}

// serve starts a server of h on a cork Listener above a counting one,
// under TLS if asked, and returns a client for it and its write count.
func serve(t *testing.T, h http.Handler, useTLS bool) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	writes := &atomic.Int64{}
	srv.Listener = Listener{corktest.Listener{Listener: srv.Listener, Wrote: func([]byte) { writes.Add(1) }}}
	srv.Config.ConnContext = ConnContext
	if useTLS {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, writes
}

// get asks for url on c and checks the body's size; it returns the
// writes the server made for the answer.
func get(t *testing.T, c *http.Client, url string, size int, writes *atomic.Int64) int64 {
	t.Helper()
	before := writes.Load()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || len(body) != size {
		t.Fatalf("GET %s: %d bytes, %v; want %d", url, len(body), err, size)
	}
	return writes.Load() - before
}

// A corked answer larger than net/http's 4 KiB buffer goes out in one
// write, on a connection kept for the next answer; uncorked, in two.
// Under TLS as well, once the handshake is over.
func TestAnAnswerGoesOutInOneWrite(t *testing.T) {
	const size = 5 << 10
	for _, useTLS := range []bool{false, true} {
		for _, corked := range []bool{true, false} {
			srv, writes := serve(t, answer(size, corked), useTLS)
			c := srv.Client()
			get(t, c, srv.URL, size, writes) // the handshake, if any
			want := int64(1)
			if !corked {
				want = 2
			}
			for range 3 {
				if n := get(t, c, srv.URL, size, writes); n != want {
					t.Errorf("tls %v, corked %v: the answer took %d writes, want %d", useTLS, corked, n, want)
				}
			}
		}
	}
}

// A corked answer larger than what a connection holds goes out whole,
// in pieces as it is written: it is not held whole.
func TestALargeAnswerGoesOutWhole(t *testing.T) {
	const size = 5 * maxHeld
	srv, writes := serve(t, answer(size, true), false)
	for range 2 {
		if n := get(t, srv.Client(), srv.URL, size, writes); n < 2 {
			t.Errorf("%d bytes went out in %d writes: held whole", size, n)
		}
	}
}

// BenchmarkAnswer is one 5 KiB answer on a kept loopback connection,
// corked (one write) and not (two): the request, the server's writes,
// the client's reads of the whole answer. What a change's 100 work
// answers each cost the two sides (bench/agents).
func BenchmarkAnswer(b *testing.B) {
	const size = 5 << 10
	for _, corked := range []bool{false, true} {
		name := "two-writes"
		if corked {
			name = "corked"
		}
		b.Run(name, func(b *testing.B) {
			srv := httptest.NewUnstartedServer(answer(size, corked))
			srv.Listener = Listener{srv.Listener}
			srv.Config.ConnContext = ConnContext
			srv.Start()
			defer srv.Close()
			c := srv.Client()
			buf := make([]byte, size)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := c.Get(srv.URL)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(resp.Body, buf); err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
		})
	}
}

// Over HTTP/2 every request of a client shares one connection: a
// request that would cork it (a long poll) holds no other request's
// answer while it waits.
func TestHTTP2AnswersAreNotHeldByAWaitingRequest(t *testing.T) {
	corked := make(chan bool, 1)
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/poll", func(w http.ResponseWriter, r *http.Request) {
		c := For(r)
		if c != nil {
			c.Cork()
			defer func() { _ = c.Uncork() }()
		}
		corked <- c != nil
		<-release
	})
	mux.HandleFunc("/now", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("here"))
	})
	srv := httptest.NewUnstartedServer(mux)
	srv.EnableHTTP2 = true
	srv.Listener = Listener{srv.Listener}
	srv.Config.ConnContext = ConnContext
	conns := &atomic.Int64{}
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	c := srv.Client()
	go func() {
		if resp, err := c.Get(srv.URL + "/poll"); err == nil {
			resp.Body.Close()
		}
	}()
	if <-corked {
		t.Error("an HTTP/2 request corked its connection")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/now", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("an answer on the connection of a waiting request: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(body) != "here" || resp.ProtoMajor != 2 {
		t.Fatalf("answer %q over HTTP/%d: %v", body, resp.ProtoMajor, err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("the two requests took %d connections, want the one HTTP/2 shares", n)
	}
}
