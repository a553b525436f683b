package api

import (
	"net/http"
	"strconv"
	"time"
)

// Applied answers GET /v1/debug/applied?index=N: when the leader applied
// entry N, the moment a change can start reaching agents. Benchmarks take
// a change's start from here rather than from a client's clock after its
// request returned, which under load comes late.
type Applied struct {
	Index     uint64    `json:"index"`
	AppliedAt time.Time `json:"applied_at"`
}

// appliedTimes is what a node that remembers apply times offers
// (raftstore.Store does).
type appliedTimes interface {
	AppliedAt(index uint64) (time.Time, bool)
}

func (s *diagAPI) applied(w http.ResponseWriter, r *http.Request) {
	index, err := strconv.ParseUint(r.URL.Query().Get("index"), 10, 64)
	if err != nil || index == 0 {
		writeError(w, http.StatusBadRequest, "index=%q: want the positive index of a log entry", r.URL.Query().Get("index"))
		return
	}
	n, ok := s.node.(appliedTimes)
	if !ok {
		writeError(w, http.StatusNotFound, "node %s keeps no apply times", s.node.NodeID())
		return
	}
	at, ok := n.AppliedAt(index)
	if !ok {
		writeError(w, http.StatusNotFound, "entry %d is not among the entries whose apply time node %s remembers (the last few thousand)", index, s.node.NodeID())
		return
	}
	writeJSON(w, http.StatusOK, Applied{Index: index, AppliedAt: at})
}
