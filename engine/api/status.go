package api

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
)

// statusAPI serves the operators' reads of what the control plane knows:
// status and its timeline, the state, a unit's universe and explanation,
// a service's config, the relations and the run history.
type statusAPI struct {
	node     Node
	ctl      *engine.Controller
	gate     *gate
	applying *applying
	log      hclog.Logger
}

func (s *statusAPI) routes(mux *router) {
	mux.HandleFunc("GET /v1/status", s.gate.leaderOnly(s.status))
	mux.HandleFunc("GET "+timelinePath, s.gate.leaderOnly(s.timeline))
	mux.HandleFunc("GET /v1/state", s.state)
	mux.HandleFunc("GET /v1/universe/{service}/{n}", s.gate.leaderOnly(s.universe))
	mux.HandleFunc("GET /v1/explain/{service}/{n}", s.gate.leaderOnly(s.explain))
	mux.HandleFunc("GET /v1/units/{unit...}", s.gate.leaderOnly(s.unit))
	mux.HandleFunc("GET /v1/services/{service}/config", s.serviceConfig)
	mux.HandleFunc("GET /v1/relations", s.relations)
	mux.HandleFunc("GET /v1/logs", s.gate.leaderOnly(s.logs))
}

// status answers GET /v1/status: the full status, or with ?summary=1 its
// summary (engine.Summary), which is what waiters poll: its size and cost
// do not grow with a line per unit.
func (s *statusAPI) status(w http.ResponseWriter, r *http.Request) {
	s, ok := s.in(w, r)
	if !ok {
		return
	}
	summary, err := summaryParam(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if !s.gate.read(w, r) {
		return
	}
	if summary {
		sum, err := s.ctl.Summary(engine.SummaryLimit)
		if err != nil {
			writeError(w, http.StatusInternalServerError, "status summary: %v", err)
			return
		}
		if s.applying.doneCh() != nil {
			sum.SetApplying()
		}
		sum.UnreachableNodes = engine.UnreachableNodes(s.node.Unreachable())
		cl := s.node.ClusterLevel()
		sum.Cluster = &cl
		w.Header().Set("X-Fixpoint-Index", strconv.FormatUint(sum.Index, 10))
		w.Header().Set("X-Fixpoint-Generation", strconv.FormatUint(sum.Generation, 10))
		writeCompact(w, http.StatusOK, sum)
		return
	}
	st, err := s.ctl.Status()
	if err != nil {
		writeError(w, http.StatusInternalServerError, "status: %v", err)
		return
	}
	s.applying.mark(st)
	st.UnreachableNodes = engine.UnreachableNodes(s.node.Unreachable())
	cl := s.node.ClusterLevel()
	st.Cluster = &cl
	w.Header().Set("X-Fixpoint-Index", strconv.FormatUint(st.Index, 10))
	w.Header().Set("X-Fixpoint-Generation", strconv.FormatUint(st.Generation, 10))
	// Compact: the CLI and the dashboard re-render it, and indenting a
	// status that grows with the environment costs the leader CPU for
	// bytes nobody reads.
	writeCompact(w, http.StatusOK, st)
}

// summaryParam reads ?summary: absent, or 1/true for the summary, 0/false
// for the full status; anything else is refused before any wait.
func summaryParam(r *http.Request) (bool, error) {
	q := r.URL.Query()
	if !q.Has("summary") {
		return false, nil
	}
	switch v := q.Get("summary"); v {
	case "", "1", "true":
		return true, nil
	case "0", "false":
		return false, nil
	default:
		return false, fmt.Errorf("summary=%q: pass summary=1 for the summary, or leave it out for the full status", v)
	}
}

func (s *statusAPI) state(w http.ResponseWriter, r *http.Request) {
	s, ok := s.in(w, r)
	if !ok {
		return
	}
	reveal, ok := reveal(s.log, w, r)
	if !ok || !s.gate.read(w, r) {
		return
	}
	_ = s.node.View(func(st *model.State) error {
		w.Header().Set("X-Fixpoint-Index", strconv.FormatUint(st.Index, 10))
		if !reveal {
			st = st.Redacted()
		}
		writeCompact(w, http.StatusOK, st)
		return nil
	})
}

func (s *statusAPI) universe(w http.ResponseWriter, r *http.Request) {
	s, ok := s.in(w, r)
	if !ok {
		return
	}
	unit := r.PathValue("service") + "/" + r.PathValue("n")
	reveal, ok := reveal(s.log, w, r)
	if !ok || !s.gate.read(w, r) {
		return
	}
	uni, err := s.ctl.Universe(unit)
	if err != nil {
		writeError(w, http.StatusNotFound, "%v", err)
		return
	}
	if !reveal {
		_ = s.node.View(func(st *model.State) error {
			uni = engine.RedactUniverse(uni, engine.OptionsOf(st, uni.Charm))
			return nil
		})
	}
	writeJSON(w, http.StatusOK, uni)
}

func (s *statusAPI) explain(w http.ResponseWriter, r *http.Request) {
	s, ok := s.in(w, r)
	if !ok {
		return
	}
	unit := r.PathValue("service") + "/" + r.PathValue("n")
	reveal, ok := reveal(s.log, w, r)
	if !ok || !s.gate.read(w, r) {
		return
	}
	e, err := s.ctl.Explain(unit)
	if err != nil {
		writeError(w, http.StatusNotFound, "%v", err)
		return
	}
	if !reveal {
		e.Changes = engine.RedactChanges(e.Changes)
	}
	writeJSON(w, http.StatusOK, e)
}
