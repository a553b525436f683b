package main

import (
	"net"
	"net/http"
	"slices"
	"sync"
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
	// defaultMaxConnsPerAddress is --http-max-conns-per-address'
	// default: an agent holds about three connections, so some eighty
	// agents behind one address (a NAT) fit.
	defaultMaxConnsPerAddress = 256
	// apiHeaderTimeout bounds reading a request's headers.
	apiHeaderTimeout = 10 * time.Second
	// apiIdleTimeout is how long a connection may wait with no request
	// on it: an agent's next request follows its last at once (a long
	// poll is a request, not idleness).
	apiIdleTimeout = 2 * time.Minute
)

// limitAPI makes srv, which is to serve ln, hold at most maxConns
// connections at once, and of them at most perAddr (and never more than
// half of maxConns) from one client address; and close connections slow
// to send their headers or idle. srv must serve the listener it returns;
// the Cap is there to exempt the node's peers (exemptPeers).
func limitAPI(srv *http.Server, ln net.Listener, maxConns, perAddr int) (net.Listener, *conncap.Cap) {
	c := conncap.New(maxConns, min(perAddr, max(maxConns/2, 1)))
	srv.ReadHeaderTimeout = apiHeaderTimeout
	srv.IdleTimeout = apiIdleTimeout
	srv.ConnState = c.ConnState
	return c.Listener(ln), c
}

// exemptPeers lifts the per-address cap for the hosts hosts lists (the
// cluster's members, which relay their agents' requests to the leader
// over as many connections as those need), looked up again at most every
// few seconds.
func exemptPeers(c *conncap.Cap, hosts func() []string) {
	var mu sync.Mutex
	var known []string
	var at time.Time
	c.Exempt(func(host string) bool {
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); now.Sub(at) > 5*time.Second {
			known, at = hosts(), now
		}
		return slices.Contains(known, host)
	})
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
