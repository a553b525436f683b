// Package conncap caps the connections an http.Server holds at once, so
// that clients that open connections and keep them (idle, or slow to send
// a request) cannot take every file descriptor and goroutine of a node.
package conncap

import (
	"net"
	"net/http"
	"sync"
)

// Cap admits at most a fixed number of connections at once: the accept of
// one more waits until one of them closes. Its Listener takes a slot for
// each connection accepted; the server's ConnState hook (Cap.ConnState)
// frees it when the server is done with the connection. The connections
// are the listener's own, unwrapped, so that what wraps them later
// (internal/cork, TLS) sees the kernel's connection.
type Cap struct {
	slots chan struct{}
}

// New returns a Cap of n connections (at least one).
func New(n int) *Cap {
	return &Cap{slots: make(chan struct{}, max(n, 1))}
}

// Open is how many connections hold a slot now.
func (c *Cap) Open() int { return len(c.slots) }

// ConnState is the http.Server.ConnState hook that frees a connection's
// slot: the server reports every connection it accepted closed or
// hijacked exactly once.
func (c *Cap) ConnState(_ net.Conn, s http.ConnState) {
	if s == http.StateClosed || s == http.StateHijacked {
		<-c.slots
	}
}

// Listener wraps ln: Accept waits for a free slot first. It must serve
// exactly one http.Server whose ConnState is c.ConnState.
func (c *Cap) Listener(ln net.Listener) net.Listener {
	return &listener{Listener: ln, slots: c.slots, done: make(chan struct{})}
}

type listener struct {
	net.Listener
	slots chan struct{}
	once  sync.Once
	done  chan struct{}
}

func (l *listener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	conn, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return conn, nil
}

// Close stops the listener, and an Accept waiting for a slot with it.
func (l *listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}
