package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model/fault"
	"github.com/fixpoint/fixpoint/raftstore/forward"
)

// gate decides where and as of when a request is answered: on the leader
// (leaderOnly passes it on from elsewhere), and after the node has
// applied what the caller waits for (read).
type gate struct {
	node     Node
	ctl      *engine.Controller
	proxy    *forward.Proxy
	applying *applying
}

// leaderOnly passes a request to the leader unless this node leads:
// claims and phases are the leader controller's soft state. ?stale lets a
// follower answer from its own copy. A request another node already
// forwarded is refused rather than passed on again.
func (g *gate) leaderOnly(h http.HandlerFunc) http.HandlerFunc {
	return g.leaderOr(h, g.proxy.Serve)
}

// leaderOr is leaderOnly with relay passing the request on to the leader.
func (g *gate) leaderOr(h http.HandlerFunc, relay func(w http.ResponseWriter, r *http.Request, leader string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if g.node.IsLeader() || (r.Method == http.MethodGet && r.URL.Query().Has("stale")) {
			h(w, r)
			return
		}
		leader := g.node.LeaderHTTP()
		if leader == "" {
			e := fault.Errorf(fault.KindNoLeader, "node %s has no leader to forward to; the control plane may have lost its quorum, try again or ask another node", g.node.NodeID())
			e.Node = g.node.NodeID()
			fault.Write(w, e)
			return
		}
		if forward.Forwarded(r) {
			e := fault.Errorf(fault.KindNotLeader, "node %s is not the leader either (it takes %s for the leader); leadership is moving, try again",
				g.node.NodeID(), leader)
			e.Leader, e.Node = leader, g.node.NodeID()
			fault.Write(w, e)
			return
		}
		relay(w, r, leader)
	}
}

// read waits for ?index=N&wait=D to move past N, then makes the read
// linearizable unless ?stale; it sets X-Fixpoint-Index. For status and
// its timeline, ?generation=G (Status.Generation) also ends the wait when
// what status shows moved past G, with or without a new entry.
func (g *gate) read(w http.ResponseWriter, r *http.Request) bool {
	q := r.URL.Query()
	if idx := q.Get("index"); idx != "" {
		after, err := strconv.ParseUint(idx, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, "index=%q is not a number", idx)
			return false
		}
		var gen uint64
		hasGen := q.Has("generation")
		if hasGen {
			if gen, err = strconv.ParseUint(q.Get("generation"), 10, 64); err != nil {
				writeError(w, http.StatusBadRequest, "generation=%q is not a number", q.Get("generation"))
				return false
			}
		}
		wait := 30 * time.Second
		if ws := q.Get("wait"); ws != "" {
			if wait, err = time.ParseDuration(ws); err != nil {
				writeError(w, http.StatusBadRequest, "wait=%q is not a duration (e.g. 30s)", ws)
				return false
			}
		}
		wait = min(wait, 10*time.Minute)
		ctx, cancel := context.WithTimeout(r.Context(), wait)
		path := unprefixedPath(r.URL.Path)
		if ctl := ctlFor(r, g.ctl); ctl != nil && (path == "/v1/status" || path == timelinePath) {
			// Phases also move without a new entry: a unit found
			// unchanged once rebuilt settles where it stands, a claim
			// ends. Only the generation the caller saw says whether one
			// moved since; without it, the next change is waited for.
			// Each environment's controller counts its own generations.
			moved := ctl.Changed()
			if hasGen {
				moved = ctl.ChangedSince(gen)
			}
			applied := g.applying.doneCh()
			go func() {
				select {
				case <-moved:
					cancel()
				case <-applied:
					cancel()
				case <-ctx.Done():
				}
			}()
		}
		_, reset, err := g.node.WaitIndex(ctx, after)
		cancel()
		if err != nil && r.Context().Err() == nil {
			writeStoreError(w, err, "watch")
			return false
		}
		if reset {
			w.Header().Set("X-Fixpoint-Reset", "1")
		}
	}
	if q.Has("stale") {
		w.Header().Set("X-Fixpoint-Last-Contact", g.node.LastContact().String())
		return true
	}
	if err := g.node.Linearize(r.Context()); err != nil {
		writeError(w, http.StatusServiceUnavailable, "linearizable read: %v (add ?stale to read this node's copy)", err)
		return false
	}
	return true
}
