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
	c := New(1)
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
