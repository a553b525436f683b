package api

import (
	"context"
	"net/http"
	"time"
)

// Health is the answer of /healthz and /readyz.
type Health struct {
	Status string `json:"status"`
	Node   string `json:"node,omitempty"`
	Leader bool   `json:"leader"`
	// LeaderAddr is the leader's HTTP address, when known.
	LeaderAddr string `json:"leader_addr,omitempty"`
	Index      uint64 `json:"index"`
	Error      string `json:"error,omitempty"`
	// Waiting says what the node still waits for to serve as configured
	// (the bootstrap node's credentials, the limits its flags give, not
	// yet recorded because the cluster has not answered), and how it
	// retries; or that recording them failed for good.
	Waiting string `json:"waiting,omitempty"`
}

// healthAPI answers the probes: whether the node is alive, and whether
// it can serve consistent reads.
type healthAPI struct {
	node Node
	// waiting says what the node still waits for (Config.Waiting).
	waiting func() string
}

func (s *healthAPI) routes(mux *router) {
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
}

// waitingFor is what the node still waits for, "" for nothing.
func (s *healthAPI) waitingFor() string {
	if s.waiting == nil {
		return ""
	}
	return s.waiting()
}

// healthz says the process is alive and serving: nothing else is checked,
// so that a node without quorum is not restarted for it. A node that
// stopped applying the log is alive too, but says "halted" and why: only
// a newer build gets it going again.
func (s *healthAPI) healthz(w http.ResponseWriter, _ *http.Request) {
	h := Health{Status: "ok", Leader: s.node.IsLeader(), LeaderAddr: s.node.LeaderHTTP(), Index: s.node.Index(), Waiting: s.waitingFor()}
	if err := s.node.Halted(); err != nil {
		h.Status, h.Error = "halted", err.Error()
	}
	writeJSON(w, http.StatusOK, h)
}

// readyz says the node can serve consistent reads: there is a leader and
// this node's state machine has applied everything committed before the
// call (a linearizable read point), within a short deadline.
func (s *healthAPI) readyz(w http.ResponseWriter, r *http.Request) {
	h := Health{Leader: s.node.IsLeader(), LeaderAddr: s.node.LeaderHTTP(), Waiting: s.waitingFor()}
	if !h.Leader && h.LeaderAddr == "" {
		h.Status, h.Error, h.Index = "unavailable", "no leader known: the control plane has no quorum or is still electing", s.node.Index()
		writeJSON(w, http.StatusServiceUnavailable, h)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	if err := s.node.Linearize(ctx); err != nil {
		h.Status, h.Error, h.Index = "unavailable", "not caught up with the leader: "+err.Error(), s.node.Index()
		writeJSON(w, http.StatusServiceUnavailable, h)
		return
	}
	h.Status, h.Index = "ok", s.node.Index()
	if h.Waiting != "" {
		h.Status, h.Error = "unavailable", "start-up settings not recorded: "+h.Waiting
		writeJSON(w, http.StatusServiceUnavailable, h)
		return
	}
	writeJSON(w, http.StatusOK, h)
}
