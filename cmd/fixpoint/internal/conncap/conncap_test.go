package conncap

import (
	"errors"
	"net"
	"net/http"
	"testing"
	"time"
)

// An Accept waiting for a slot returns when its listener closes, so that
// a server at its cap still shuts down; a freed slot lets it accept.
func TestAcceptWaitsForASlotOrClose(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := New(1, 1)
	ln := c.Listener(raw)
	dial := func() {
		conn, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
	}
	dial()
	dial()
	first, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if c.Open() != 1 {
		t.Fatalf("%d open after one accept", c.Open())
	}
	got := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err == nil {
			conn.Close()
		}
		got <- err
	}()
	c.ConnState(first, http.StateClosed) // the server is done with it
	if err := wait(t, got); err != nil {
		t.Fatalf("accept after a slot was freed: %v", err)
	}
	go func() {
		_, err := ln.Accept()
		got <- err
	}()
	ln.Close()
	if err := wait(t, got); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("accept waiting for a slot, listener closed: %v; want net.ErrClosed", err)
	}
}

func wait(t *testing.T, ch chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(time.Minute):
		t.Fatal("accept still waiting")
		return nil
	}
}

// A host's connections count against its cap until the server is done
// with them; an exempt host is not bounded by it.
func TestPerAddressCapCountsUntilClosedAndSparesExemptHosts(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := New(8, 1)
	ln := c.Listener(raw)
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- conn
		}
	}()
	dial := func(ip byte) net.Conn {
		conn, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, ip)}}).Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	next := func() net.Conn {
		t.Helper()
		select {
		case conn := <-accepted:
			return conn
		case <-time.After(time.Minute):
			t.Fatal("nothing accepted")
			return nil
		}
	}
	dial(1)
	first := next()
	dial(1) // over 127.0.0.1's cap of one: closed, never returned
	dial(2)
	if got := next(); got.RemoteAddr().(*net.TCPAddr).IP.String() != "127.0.0.2" {
		t.Fatalf("accepted %v; want the connection from 127.0.0.2, the second from 127.0.0.1 refused", got.RemoteAddr())
	}
	if c.Refused() != 1 {
		t.Fatalf("%d connections refused; want 1", c.Refused())
	}
	c.ConnState(first, http.StateClosed)
	dial(1)
	if got := next(); got.RemoteAddr().(*net.TCPAddr).IP.String() != "127.0.0.1" {
		t.Fatalf("accepted %v after 127.0.0.1's first closed; want 127.0.0.1's", got.RemoteAddr())
	}
	c.Exempt(func(host string) bool { return host == "127.0.0.1" })
	dial(1)
	if got := next(); got.RemoteAddr().(*net.TCPAddr).IP.String() != "127.0.0.1" {
		t.Fatalf("accepted %v; want 127.0.0.1's second, the host exempt", got.RemoteAddr())
	}
}
