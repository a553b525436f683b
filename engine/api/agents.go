package api

import (
	"fmt"
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
	// GoneEnvs lists the environments of Heartbeat.Envs the cluster no
	// longer holds, read linearizably: the agent removes their
	// directories.
	GoneEnvs []string `json:"gone_envs,omitempty"`
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
// is running right now. Units are named by unit key (wire.UnitKey):
// "ENV:SERVICE/N" for an environment other than the default, a bare name
// (all an agent built before environments sends) for the default one's;
// the answer names them as asked.
type Heartbeat struct {
	Running []string `json:"running"`
	// Kept lists the units whose storage the agent keeps on its machine,
	// asked about: the reply's Released says which the control plane no
	// longer places there. At most MaxKept.
	Kept []string `json:"kept,omitempty"`
	// Envs lists the environments whose directories the agent keeps,
	// asked about: the reply's GoneEnvs says which the cluster no longer
	// holds. At most MaxKept.
	Envs []string `json:"envs,omitempty"`
}

// MaxKept bounds Heartbeat.Kept and Heartbeat.Envs.
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
	if len(hb.Kept) > MaxKept || len(hb.Envs) > MaxKept || len(hb.Running) > MaxKept {
		writeError(w, http.StatusBadRequest, "%d running units, %d kept units and %d environments in one heartbeat; the limit of each is %d", len(hb.Running), len(hb.Kept), len(hb.Envs), MaxKept)
		return
	}
	for _, key := range hb.Kept {
		if err := checkUnitKey(key); err != nil {
			writeError(w, http.StatusBadRequest, "kept unit: %v", err)
			return
		}
	}
	for _, env := range hb.Envs {
		if err := model.CheckName(model.KindEnv, env); err != nil {
			writeError(w, http.StatusBadRequest, "environment asked about: %v", err)
			return
		}
	}
	s.agents.Heartbeat(machine)
	if hb.Running != nil {
		s.agents.ReleaseExcept(machine, hb.Running)
	}
	// Whether a unit's storage or an environment's directory may go is
	// answered from the latest committed state only: an answer from a
	// state behind the one that placed the unit would remove the data of
	// a unit that exists.
	if len(hb.Kept) > 0 || len(hb.Envs) > 0 {
		if err := s.node.Linearize(r.Context()); err != nil {
			writeError(w, http.StatusServiceUnavailable, "linearizable read of the kept units: %v; the agent asks again", err)
			return
		}
	}
	// Units the agent runs that are no longer placed on its machine
	// (removed, or moved, or their environment removed): the agent ends
	// their hooks at once rather than at their timeout. Kept units no
	// longer placed there: the agent removes their storage. Each is
	// judged in its own environment.
	reply := HeartbeatReply{Machine: machine}
	_ = s.node.ViewCluster(func(c *model.Cluster) error {
		placed := func(key string) bool {
			env, name := wire.SplitUnitKey(key)
			st := c.Default
			if env != "" {
				e := c.Envs[env]
				if e == nil {
					return false
				}
				st = e.State
			}
			u, ok := st.Units[name]
			return ok && u.Machine == machine
		}
		for _, key := range hb.Running {
			if !placed(key) {
				reply.Gone = append(reply.Gone, key)
			}
		}
		for _, key := range hb.Kept {
			if !placed(key) {
				reply.Released = append(reply.Released, key)
			}
		}
		for _, env := range hb.Envs {
			if _, ok := c.Envs[env]; !ok {
				reply.GoneEnvs = append(reply.GoneEnvs, env)
			}
		}
		return nil
	})
	writeCompact(w, http.StatusOK, reply)
}

// checkUnitKey refuses a unit key (wire.UnitKey) that names no unit.
func checkUnitKey(key string) error {
	env, unit := wire.SplitUnitKey(key)
	if env != "" {
		if err := model.CheckName(model.KindEnv, env); err != nil {
			return fmt.Errorf("unit %s: %w", model.Quote(key, 72), err)
		}
	}
	return model.CheckUnitName(unit)
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
