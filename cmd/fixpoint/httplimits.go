package main

import (
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/fixpoint/fixpoint/cmd/fixpoint/internal/conncap"
)

// What one client can hold of a node's API. A cluster's agents each keep
// a long poll, a heartbeat and a report in flight, and a follower relays
// its agents' requests to the leader: a thousand agents hold a few
// thousand connections, all busy. A client that opens connections and
// keeps them idle, or never finishes its headers, is closed.
const (
	// defaultMaxConns is --http-max-conns' default.
	defaultMaxConns = 8192
	// apiHeaderTimeout bounds reading a request's headers.
	apiHeaderTimeout = 10 * time.Second
	// apiIdleTimeout is how long a connection may wait with no request
	// on it: an agent's next request follows its last at once (a long
	// poll is a request, not idleness).
	apiIdleTimeout = 2 * time.Minute
)

// limitAPI makes srv, which is to serve ln, hold at most maxConns
// connections at once and close connections slow to send their headers
// or idle; srv must serve the listener it returns.
func limitAPI(srv *http.Server, ln net.Listener, maxConns int) net.Listener {
	c := conncap.New(maxConns)
	srv.ReadHeaderTimeout = apiHeaderTimeout
	srv.IdleTimeout = apiIdleTimeout
	srv.ConnState = c.ConnState
	return c.Listener(ln)
}

// connLimit is maxConns, or half the files this process may open if that
// is fewer (the rest are Raft's, the log's and the charms'), and that
// limit.
func connLimit(maxConns int) (int, uint64) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return maxConns, 0
	}
	if half := r.Cur / 2; uint64(maxConns) > half {
		return int(max(half, 1)), r.Cur
	}
	return maxConns, r.Cur
}
