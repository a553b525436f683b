package api

import (
	"net/http"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/engine/api/cork"
	"github.com/fixpoint/fixpoint/engine/memgov"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
	"github.com/fixpoint/fixpoint/raftstore/forward"
)

// agentAPI serves the agents: registration, work polls, heartbeats and
// results.
type agentAPI struct {
	node   Node
	agents Agents
	gate   *gate
	proxy  *forward.Proxy
	log    hclog.Logger
	// mem paces work polls and results under memory pressure (intake).
	mem *memgov.Governor
}

func (s *agentAPI) routes(mux *router) {
	mux.HandleFunc("POST /v1/agent/register", s.gate.leaderOnly(s.register))
	mux.HandleFunc("GET /v1/agent/work", corked(s.gate.leaderOr(intake(s.mem, s.node, s.work), s.relayPoll)))
	mux.HandleFunc("POST /v1/agent/heartbeat", s.gate.leaderOnly(s.heartbeat))
	mux.HandleFunc("POST /v1/agent/results", s.gate.leaderOnly(intake(s.mem, s.node, s.results)))
}

// HeartbeatReply answers a heartbeat: Gone lists the running units that
// are no longer placed on the machine, whose hooks the agent ends.
type HeartbeatReply struct {
	Machine string   `json:"machine"`
	Gone    []string `json:"gone,omitempty"`
	// Released lists the units of Heartbeat.Kept that are no longer
	// placed on the machine, read linearizably: the agent removes their
	// storage.
	Released []string `json:"released,omitempty"`
}

func (s *agentAPI) work(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	machine := q.Get("machine")
	if machine == "" {
		writeError(w, http.StatusBadRequest, "machine= is required")
		return
	}
	registered := false
	_ = s.node.View(func(st *model.State) error {
		_, registered = st.Machines[machine]
		return nil
	})
	if !registered {
		writeKind(w, fault.KindNotRegistered, "machine %s is not registered; the agent registers it on start", machine)
		return
	}
	wait, err := pollWait(q)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	max, err := workMax(q.Get("max"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	envs, err := pollEnvs(q)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	work, err := s.agents.WaitForWork(r.Context(), machine, max, wait, envs)
	if err != nil && r.Context().Err() == nil {
		writeError(w, http.StatusInternalServerError, "claim: %v", err)
		return
	}
	writeWork(w, work)
}

// corked sends each answer of h in one write (engine/api/cork), not a
// header and a body apart, on the leader and again on a follower relaying
// it. Only for handlers that write one bounded answer: what a corked
// handler flushes is held.
func corked(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if c := cork.For(r); c != nil {
			c.Cork()
			defer func() { _ = c.Uncork() }()
			defer func() { _ = http.NewResponseController(w).Flush() }()
		}
		h(w, r)
	}
}

// Heartbeat is the body of POST /v1/agent/heartbeat: the units the agent
// is running right now.
type Heartbeat struct {
	Running []string `json:"running"`
	// Kept lists the units whose storage the agent keeps on its machine,
	// asked about: the reply's Released says which the control plane no
	// longer places there. At most MaxKept.
	Kept []string `json:"kept,omitempty"`
}

// MaxKept bounds Heartbeat.Kept.
const MaxKept = 10000

func (s *agentAPI) heartbeat(w http.ResponseWriter, r *http.Request) {
	machine := r.URL.Query().Get("machine")
	if machine == "" {
		writeError(w, http.StatusBadRequest, "machine= is required")
		return
	}
	var hb Heartbeat
	if r.ContentLength != 0 && !decode(w, r, &hb) {
		return
	}
	if len(hb.Kept) > MaxKept {
		writeError(w, http.StatusBadRequest, "%d kept units in one heartbeat; the limit is %d", len(hb.Kept), MaxKept)
		return
	}
	for _, name := range hb.Kept {
		if err := model.CheckUnitName(name); err != nil {
			writeError(w, http.StatusBadRequest, "kept unit: %v", err)
			return
		}
	}
	s.agents.Heartbeat(machine)
	if hb.Running != nil {
		s.agents.ReleaseExcept(machine, hb.Running)
	}
	// Whether a unit's storage may go is answered from the latest
	// committed state only: an answer from a state behind the one that
	// placed the unit would remove the data of a unit that exists.
	if len(hb.Kept) > 0 {
		if err := s.node.Linearize(r.Context()); err != nil {
			writeError(w, http.StatusServiceUnavailable, "linearizable read of the kept units: %v; the agent asks again", err)
			return
		}
	}
	// Units the agent runs that are no longer placed on its machine
	// (removed, or moved): the agent ends their hooks at once rather than
	// at their timeout. Kept units no longer placed there: the agent
	// removes their storage.
	var gone, released []string
	_ = s.node.View(func(st *model.State) error {
		placed := func(name string) bool { u, ok := st.Units[name]; return ok && u.Machine == machine }
		for _, name := range hb.Running {
			if !placed(name) {
				gone = append(gone, name)
			}
		}
		for _, name := range hb.Kept {
			if !placed(name) {
				released = append(released, name)
			}
		}
		return nil
	})
	writeCompact(w, http.StatusOK, HeartbeatReply{Machine: machine, Gone: gone, Released: released})
}

func (s *agentAPI) results(w http.ResponseWriter, r *http.Request) {
	machine := r.URL.Query().Get("machine")
	var reports []wire.Report
	if !decode(w, r, &reports) {
		return
	}
	resp, err := s.agents.Accept(r.Context(), machine, reports)
	if err != nil {
		writeStoreError(w, err, "")
		return
	}
	writeCompact(w, http.StatusOK, resp)
}
