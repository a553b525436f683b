package raftstore

import (
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// termGuard is raft's network transport with its heartbeat fast path
// kept to the heartbeats that cannot change the node's term or role.
//
// raft answers a heartbeat on the connection's goroutine, beside the
// node's main loop, so that a follower's disk does not delay it. A
// heartbeat of a newer term makes the node a follower of that term
// there. A leader whose loop is waiting for proposals then dispatches
// the next one with the term it reads at that moment, the new one, which
// it does not lead: its entry has the index and term of the new leader's
// entry at that index (its no-op, say) and so is never replaced, and the
// two nodes apply different entries (hashicorp/raft#695). termGuard hands
// every other heartbeat to the main loop, as any other RPC, where a term
// change happens between two of the loop's steps.
//
// The fast path stays safe: it takes a heartbeat only when its term is
// the node's current term and the node follows. Terms only grow, so the
// heartbeat cannot raise the term when raft handles it, and no leader of
// that term other than its sender exists.
type termGuard struct {
	*raft.NetworkTransport
	rpcs chan raft.RPC
	done chan struct{}
	stop sync.Once
	// node is the Raft whose term and role decide; until it is set every
	// heartbeat goes to the main loop.
	node atomic.Pointer[raft.Raft]
	fast atomic.Pointer[func(raft.RPC)]
	// mu is held for reading while the fast path runs and for writing
	// while Close marks the guard closed: raft closes its transport once
	// its own loops have stopped and before the store closes the stable
	// store the fast path writes the term to, so no fast-path heartbeat
	// runs after Close returns.
	mu     sync.RWMutex
	closed bool
}

// guardTerms wraps t; its RPCs reach raft through Consumer.
func guardTerms(t *raft.NetworkTransport) *termGuard {
	g := &termGuard{NetworkTransport: t, rpcs: make(chan raft.RPC), done: make(chan struct{})}
	go g.forward()
	return g
}

// setNode makes r's term and role decide which heartbeats take the fast
// path.
func (g *termGuard) setNode(r *raft.Raft) { g.node.Store(r) }

// forward passes the transport's RPCs on to Consumer until Close.
func (g *termGuard) forward() {
	in := g.NetworkTransport.Consumer()
	for {
		select {
		case rpc := <-in:
			select {
			case g.rpcs <- rpc:
			case <-g.done:
				rpc.Respond(nil, raft.ErrTransportShutdown)
				return
			}
		case <-g.done:
			return
		}
	}
}

// Consumer implements raft.Transport: the RPCs for the main loop,
// including the heartbeats the fast path may not take.
func (g *termGuard) Consumer() <-chan raft.RPC { return g.rpcs }

// SetHeartbeatHandler implements raft.Transport.
func (g *termGuard) SetHeartbeatHandler(cb func(raft.RPC)) {
	if cb == nil {
		g.fast.Store(nil)
		g.NetworkTransport.SetHeartbeatHandler(nil)
		return
	}
	g.fast.Store(&cb)
	g.NetworkTransport.SetHeartbeatHandler(g.heartbeat)
}

// heartbeat runs on the connection's goroutine; the transport waits for
// the RPC's answer either way.
func (g *termGuard) heartbeat(rpc raft.RPC) {
	if g.takeFastPath(rpc) {
		return
	}
	select {
	case g.rpcs <- rpc:
	case <-g.done:
		rpc.Respond(nil, raft.ErrTransportShutdown)
	}
}

// takeFastPath hands rpc to raft's fast path if it may take it, and
// reports whether it did.
func (g *termGuard) takeFastPath(rpc raft.RPC) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	fast := g.fast.Load()
	if g.closed || fast == nil || !g.mayTakeFastPath(rpc) {
		return false
	}
	(*fast)(rpc)
	return true
}

// mayTakeFastPath reports whether rpc is a heartbeat of the node's
// current term and the node follows. The term is read first: once it
// equals the heartbeat's it stays at least that.
func (g *termGuard) mayTakeFastPath(rpc raft.RPC) bool {
	r := g.node.Load()
	req, ok := rpc.Command.(*raft.AppendEntriesRequest)
	return r != nil && ok && req.Term == r.CurrentTerm() && r.State() == raft.Follower
}

// Close implements raft.WithClose. It returns once no fast-path
// heartbeat runs.
func (g *termGuard) Close() error {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.stop.Do(func() { close(g.done) })
	return g.NetworkTransport.Close()
}
