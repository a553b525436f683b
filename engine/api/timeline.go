package api

import (
	"net/http"
	"strconv"
)

// timelinePath is the units per phase over time since the last apply
// (engine.Timeline), blocking like status with ?index=&generation=&wait=.
const timelinePath = "/v1/status/timeline"

// timeline serves GET /v1/status/timeline: the dashboard's convergence
// chart. It is the leader's series; a new leader starts its own.
func (s *statusAPI) timeline(w http.ResponseWriter, r *http.Request) {
	s, ok := s.in(w, r)
	if !ok {
		return
	}
	if !s.gate.read(w, r) {
		return
	}
	tl := s.ctl.Timeline()
	w.Header().Set("X-Fixpoint-Index", strconv.FormatUint(s.node.Index(), 10))
	writeCompact(w, http.StatusOK, tl)
}
