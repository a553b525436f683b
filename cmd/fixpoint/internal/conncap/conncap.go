// Package conncap caps the connections an http.Server holds at once, in
// all and per client address, so that clients that open connections and
// keep them (idle, or slow to send a request) cannot take every file
// descriptor and goroutine of a node, and one address cannot take every
// slot from the others.
package conncap

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// Cap admits at most a fixed number of connections at once: the accept of
// one more waits until one of them closes. Of those, one client address
// holds at most a smaller number: a connection past it is closed as soon
// as it is accepted. Its Listener takes a slot for each connection
// accepted; the server's ConnState hook (Cap.ConnState) frees it when the
// server is done with the connection. The connections are the listener's
// own, unwrapped, so that what wraps them later (internal/cork, TLS) sees
// the kernel's connection.
type Cap struct {
	slots   chan struct{}
	perAddr int
	exempt  atomic.Pointer[func(host string) bool]
	refused atomic.Int64

	mu sync.Mutex
	// byHost counts the connections held per client host; counted maps
	// each counted connection's remote address to its host.
	byHost  map[string]int
	counted map[string]string
}

// New returns a Cap of n connections in all (at least one), and of
// perAddr per client address (at least one, at most n).
func New(n, perAddr int) *Cap {
	n = max(n, 1)
	return &Cap{slots: make(chan struct{}, n), perAddr: min(max(perAddr, 1), n), byHost: map[string]int{}, counted: map[string]string{}}
}

// Exempt sets which client hosts the per-address cap does not bound (a
// node's peers, which relay their agents' requests); nil bounds all.
func (c *Cap) Exempt(f func(host string) bool) {
	if f == nil {
		c.exempt.Store(nil)
		return
	}
	c.exempt.Store(&f)
}

// Open is how many connections hold a slot now.
func (c *Cap) Open() int { return len(c.slots) }

// Refused counts the connections closed for their address's cap.
func (c *Cap) Refused() int64 { return c.refused.Load() }

// ConnState is the http.Server.ConnState hook that frees a connection's
// slot: the server reports every connection it accepted closed or
// hijacked exactly once.
func (c *Cap) ConnState(conn net.Conn, s http.ConnState) {
	if s != http.StateClosed && s != http.StateHijacked {
		return
	}
	c.mu.Lock()
	key := conn.RemoteAddr().String()
	if host, ok := c.counted[key]; ok {
		delete(c.counted, key)
		if c.byHost[host]--; c.byHost[host] <= 0 {
			delete(c.byHost, host)
		}
	}
	c.mu.Unlock()
	<-c.slots
}

// admit counts conn against its host's cap, or says it is over it.
func (c *Cap) admit(conn net.Conn) bool {
	key := conn.RemoteAddr().String()
	host, _, err := net.SplitHostPort(key)
	if err != nil {
		host = key
	}
	if f := c.exempt.Load(); f != nil && (*f)(host) {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byHost[host] >= c.perAddr {
		return false
	}
	c.byHost[host]++
	c.counted[key] = host
	return true
}

// Listener wraps ln: Accept waits for a free slot first, and closes the
// connections over their address's cap. It must serve exactly one
// http.Server whose ConnState is c.ConnState.
func (c *Cap) Listener(ln net.Listener) net.Listener {
	return &listener{Listener: ln, c: c, done: make(chan struct{})}
}

type listener struct {
	net.Listener
	c    *Cap
	once sync.Once
	done chan struct{}
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		select {
		case l.c.slots <- struct{}{}:
		case <-l.done:
			return nil, net.ErrClosed
		}
		conn, err := l.Listener.Accept()
		if err != nil {
			<-l.c.slots
			return nil, err
		}
		if l.c.admit(conn) {
			return conn, nil
		}
		// Closed before a byte is read: the client sees its connection
		// reset and may try again once one of its others closes.
		l.c.refused.Add(1)
		conn.Close()
		<-l.c.slots
	}
}

// Close stops the listener, and an Accept waiting for a slot with it.
func (l *listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}
