// Package corktest watches the writes a server makes on its connections,
// for the tests that check how many writes an answer takes.
package corktest

import "net"

// Listener calls Wrote with every write made on the connections it
// accepts, before the write.
type Listener struct {
	net.Listener
	Wrote func(p []byte)
}

// Accept wraps the next connection.
func (l Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return conn{c, l.Wrote}, nil
}

type conn struct {
	net.Conn
	wrote func(p []byte)
}

func (c conn) Write(p []byte) (int, error) {
	c.wrote(p)
	return c.Conn.Write(p)
}
