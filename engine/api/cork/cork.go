// Package cork lets an HTTP handler send a whole answer in one write.
//
// net/http writes an answer through a 4 KiB buffer, so an answer a
// little larger (a work answer with the universe of a unit with 100
// peers, about 5 KiB) goes out in two writes; on loopback each one runs
// the receiving side's TCP and wakes its reader, and a change's 100
// answers paid for 200 (bench/agents, bench/README.md). A handler that
// corks its connection (From) has the writes held until it uncorks, and
// then made at once.
//
// Only handlers that write one bounded answer and return should cork:
// a corked connection holds what a streaming handler flushes. The held
// bytes are bounded all the same (maxHeld): past it they go out at once
// and the connection is no longer corked. Only an HTTP/1 request corks
// (For): an HTTP/2 connection carries many requests' answers at once,
// and corking it for one request would hold the others' until that one
// ends.
package cork

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"sync"
)

// Conn is a connection whose writes can be held (Cork) and sent together
// (Uncork).
type Conn struct {
	net.Conn

	mu     sync.Mutex
	corked bool
	held   *[]byte // from bufs, while corked and holding
}

// maxHeld is the most a corked connection holds: a work answer of one
// unit (a few KiB to a few tens) fits; a larger one streams as before.
const maxHeld = 64 << 10

var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// Cork holds the writes from now until Uncork.
func (c *Conn) Cork() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// Uncork sends what was held, in one write, and stops holding.
func (c *Conn) Uncork() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	return c.release(nil)
}

// release writes what is held and p in one write (writev), and lets the
// held buffer go. Called with mu.
func (c *Conn) release(p []byte) error {
	var out net.Buffers
	if c.held != nil && len(*c.held) > 0 {
		out = append(out, *c.held)
	}
	if len(p) > 0 {
		out = append(out, p)
	}
	var err error
	switch len(out) {
	case 1:
		_, err = c.Conn.Write(out[0])
	case 2:
		_, err = out.WriteTo(c.Conn)
	}
	if c.held != nil && cap(*c.held) <= maxHeld {
		*c.held = (*c.held)[:0]
		bufs.Put(c.held)
	}
	c.held = nil
	return err
}

// Write writes p, or holds it while the connection is corked and holds
// less than maxHeld.
func (c *Conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if !c.corked {
		c.mu.Unlock()
		return c.Conn.Write(p)
	}
	defer c.mu.Unlock()
	held := 0
	if c.held != nil {
		held = len(*c.held)
	}
	if held+len(p) > maxHeld {
		c.corked = false
		if err := c.release(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if c.held == nil {
		c.held = bufs.Get().(*[]byte)
	}
	*c.held = append(*c.held, p...)
	return len(p), nil
}

// ReadFrom is the connection's own (sendfile, for a charm's archive)
// when nothing is held.
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	c.mu.Lock()
	corked := c.corked
	c.mu.Unlock()
	if rf, ok := c.Conn.(io.ReaderFrom); ok && !corked {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c}, r)
}

// CloseWrite is the connection's own: net/http closes an answer's
// connection gracefully with it.
func (c *Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Listener accepts corkable connections.
type Listener struct{ net.Listener }

// Accept accepts the next connection as a *Conn.
func (l Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &Conn{Conn: c}, nil
}

type key struct{}

// ConnContext, as http.Server.ConnContext, makes a connection accepted
// by a Listener, under TLS or not, known to its requests' handlers.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if cc, ok := c.(*Conn); ok {
		return context.WithValue(ctx, key{}, cc)
	}
	return ctx
}

// For returns the corkable connection of r, nil if r came through no
// Listener or shares its connection with other requests (HTTP/2): a
// connection corked for one request holds every answer written on it.
func For(r *http.Request) *Conn {
	if r.ProtoMajor != 1 {
		return nil
	}
	c, _ := r.Context().Value(key{}).(*Conn)
	return c
}
