package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// serveLimited serves a handler that refuses every request, as the API
// does a request without a token, behind limitAPI.
func serveLimited(t *testing.T, maxConns, perAddr int, tweak func(*http.Server)) (string, func() (open, most int)) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no token", http.StatusUnauthorized)
	})}
	lln, _ := limitAPI(srv, ln, maxConns, perAddr)
	if tweak != nil {
		tweak(srv)
	}
	var mu sync.Mutex
	open, most := 0, 0
	free := srv.ConnState
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		mu.Lock()
		switch s {
		case http.StateNew:
			open++
			most = max(most, open)
		case http.StateClosed, http.StateHijacked:
			open--
		}
		mu.Unlock()
		free(c, s)
	}
	go func() { _ = srv.Serve(lln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String(), func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return open, most
	}
}

// ask sends one request on a new connection and returns the connection
// once the answer is read; it stays open, idle.
func ask(addr string) (net.Conn, error) {
	return askFrom(nil, addr)
}

// askFrom is ask from the local address from (nil: any).
func askFrom(from net.Addr, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{LocalAddr: from}).Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	if _, err := io.WriteString(c, "GET /v1/status HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		c.Close()
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return c, nil
}

// Clients that open connections and keep them hold at most the cap; the
// others wait their turn and are all answered as connections close.
func TestAPIHoldsAtMostItsConnectionCap(t *testing.T) {
	const limit, clients = 4, 12
	addr, counts := serveLimited(t, limit, limit, nil)
	answered := make(chan net.Conn, clients)
	for i := range clients {
		go func() {
			// Each from an address of its own: one address holds at
			// most its share (TestOneAddressHoldsAtMostItsShare).
			c, err := askFrom(&net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(10+i))}, addr)
			if err != nil {
				t.Error(err)
				c = nil
			}
			answered <- c
		}()
	}
	// Close answered connections only once `limit` of them (or all that
	// are left) are answered and held.
	for left := clients; left > 0; {
		batch := min(limit, left)
		var held []net.Conn
		for range batch {
			select {
			case c := <-answered:
				held = append(held, c)
			case <-time.After(time.Minute):
				t.Fatalf("%d clients never answered", left)
			}
		}
		for _, c := range held {
			if c != nil {
				c.Close()
			}
		}
		left -= batch
	}
	if _, most := counts(); most > limit {
		t.Errorf("the server held %d connections at once; cap %d", most, limit)
	}
}

// A connection with no request on it is closed after the idle timeout,
// so that idle clients give their slots back.
func TestAPIClosesIdleConnections(t *testing.T) {
	addr, counts := serveLimited(t, 4, 4, func(srv *http.Server) {
		if srv.IdleTimeout <= 0 || srv.ReadHeaderTimeout <= 0 {
			t.Fatalf("idle timeout %v, header timeout %v: a client could hold a connection for ever", srv.IdleTimeout, srv.ReadHeaderTimeout)
		}
		srv.IdleTimeout = 50 * time.Millisecond // the test's, not a node's
	})
	c, err := ask(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	if n, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("idle connection: read %d bytes, %v; want it closed by the server", n, err)
	}
	rafttest.Until(t, time.Minute, "the closed idle connection gives its slot back", func() bool {
		open, _ := counts()
		return open == 0
	})
}

// One client address that opens connections and keeps them idle, never
// sending a request, holds at most its per-address cap: the others it
// opens are closed at once, and a client from another address is
// answered while it holds them.
func TestOneAddressHoldsAtMostItsShare(t *testing.T) {
	const limit, perAddr, idle = 8, 3, 12
	addr, counts := serveLimited(t, limit, perAddr, nil)
	hostile := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}
	var held []net.Conn
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	for range idle {
		c, err := (&net.Dialer{LocalAddr: hostile}).Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	// The server accepts them in the order they were dialled: the first
	// perAddr are held, the others closed before a byte is read.
	rafttest.Until(t, time.Minute, "the server holds one address's share", func() bool {
		open, _ := counts()
		return open == perAddr
	})
	for i, c := range held[perAddr:] {
		_ = c.SetReadDeadline(time.Now().Add(time.Minute))
		if n, err := c.Read(make([]byte, 1)); err == nil || isTimeout(err) {
			t.Fatalf("idle connection %d from an address past its share of %d: read %d bytes, %v; want it closed", perAddr+i+1, perAddr, n, err)
		}
	}
	other := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}
	c, err := askFrom(other, addr)
	if err != nil {
		t.Fatalf("a client from another address while the first holds its share: %v", err)
	}
	c.Close()
	if _, most := counts(); most > perAddr+1 {
		t.Errorf("the server held %d connections at once; want at most %d from one address and 1 from the other", most, perAddr)
	}
	if open, _ := counts(); open < perAddr {
		t.Errorf("%d connections open; the %d within the share stay open until the idle close", open, perAddr)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
