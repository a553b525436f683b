// Package api is the control plane's HTTP interface for operators and
// agents, and the client both use. Node-to-node Raft endpoints live in
// raftstore; this package mounts them under /v1/raft/.
package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api/cork"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
	"github.com/fixpoint/fixpoint/raftstore/forward"
)

// Node is the control-plane node the API serves: the replicated store and
// what it knows about leadership. raftstore.Store implements it.
type Node interface {
	engine.Store
	Linearize(ctx context.Context) error
	IsLeader() bool
	LeaderHTTP() string
	// NodeID names this node in forwarded requests and error answers.
	NodeID() string
	LastContact() time.Duration
	// Unreachable lists, on the leader, the nodes that stopped
	// answering it, with when each last did; nil elsewhere.
	Unreachable() map[string]time.Time
	// ClusterLevel is the servers' builds and the cluster's feature
	// level, as this node last heard them.
	ClusterLevel() model.ClusterLevel
	// Halted is why this node stopped applying the log, nil while it
	// applies.
	Halted() error
	Handler() http.Handler
}

// Config configures a Server.
type Config struct {
	Node       Node
	Controller *engine.Controller
	// CharmDir keeps charm archives by content hash.
	CharmDir string
	// Transport carries requests forwarded to the leader, with the
	// caller's credentials: a forward.NewTransport, shared with the
	// node's other node-to-node requests so that they share a pool.
	Transport http.RoundTripper
	// Peers lists the other nodes' HTTP addresses, to which charm
	// archives are replicated; PeerClient talks to them (it carries the
	// node's credentials).
	Peers      func(ctx context.Context) []string
	PeerClient *http.Client
	Log        hclog.Logger
	// Waiting, when set, says what the node still waits for before it
	// serves as configured (its start-up records), "" once nothing; the
	// health answers carry it.
	Waiting func() string
}

// Server serves the API of one control-plane node.
type Server struct {
	node    Node
	ctl     *engine.Controller
	charms  string
	log     hclog.Logger
	mux     *http.ServeMux
	proxy   *forward.Proxy
	metrics *metrics

	peers      func(ctx context.Context) []string
	peerClient *forward.Client
	waiting    func() string
	applying   applying
	creds      credentials
	// catchingUp holds the one catch-up with the leader that requests
	// with an unknown token may run at a time (auth.go).
	catchingUp chan struct{}
	// logSlots bounds the log batches this node proposes at once
	// (debuglog.go).
	logSlots chan struct{}
}

// NewServer returns the API of one node.
func NewServer(cfg Config) *Server {
	if cfg.Log == nil {
		cfg.Log = hclog.NewNullLogger()
	}
	if cfg.Transport == nil {
		cfg.Transport = forward.NewTransport(nil)
	}
	if cfg.PeerClient == nil {
		cfg.PeerClient = &http.Client{Transport: cfg.Transport}
	}
	node := cfg.Node
	s := &Server{node: node, ctl: cfg.Controller, charms: cfg.CharmDir, log: cfg.Log, mux: http.NewServeMux(),
		proxy: forward.NewProxy(cfg.Transport, cfg.PeerClient, node.NodeID()),
		peers: cfg.Peers, peerClient: forward.NewClient(cfg.PeerClient, node.NodeID()),
		waiting: cfg.Waiting, catchingUp: make(chan struct{}, 1)}
	s.mux.Handle("/v1/raft/", node.Handler())
	s.mux.HandleFunc("GET /v1/status", s.leaderOnly(s.status))
	s.mux.HandleFunc("GET "+timelinePath, s.leaderOnly(s.timeline))
	s.mux.HandleFunc("GET /v1/state", s.state)
	s.mux.HandleFunc("POST /v1/deploy", s.deploy)
	s.mux.HandleFunc("POST /v1/plan", s.plan)
	s.mux.HandleFunc("POST /v1/resolved", s.resolved)
	s.mux.HandleFunc("GET /v1/universe/{service}/{n}", s.leaderOnly(s.universe))
	s.mux.HandleFunc("GET /v1/explain/{service}/{n}", s.leaderOnly(s.explain))
	s.mux.HandleFunc("GET /v1/units/{unit...}", s.leaderOnly(s.unit))
	s.mux.HandleFunc("GET /v1/services/{service}/config", s.serviceConfig)
	s.mux.HandleFunc("PUT /v1/charms/{hash}", s.putCharm)
	s.mux.HandleFunc("GET /v1/charms/{hash}", s.getCharm)
	s.mux.HandleFunc("PUT /v1/resources/{hash}", s.putResource)
	s.mux.HandleFunc("GET /v1/resources/{hash}", s.getResource)
	s.mux.HandleFunc("POST /v1/agent/register", s.leaderOnly(s.register))
	s.mux.HandleFunc("GET /v1/agent/work", corked(s.leaderOr(s.work, s.relayPoll)))
	s.mux.HandleFunc("POST /v1/agent/heartbeat", s.leaderOnly(s.heartbeat))
	// Profiles of a live node, for the operator only (see authorize).
	s.mux.HandleFunc("GET /v1/debug/applied", s.leaderOnly(s.applied))
	s.mux.HandleFunc("/debug/pprof/", pprof.Index)
	s.mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	s.mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	s.mux.HandleFunc("POST /v1/agent/results", s.leaderOnly(s.results))
	// Writes other nodes pass on for their callers, several to a request;
	// each is authorized on its own (authorize lets only the nodes'
	// operator credential send a batch).
	s.mux.HandleFunc("POST "+forward.BatchPath, func(w http.ResponseWriter, r *http.Request) { forward.ServeBatch(w, r, s) })
	s.mux.HandleFunc("POST /v1/machines/{name}/reset", s.resetMachine)
	s.mux.HandleFunc("POST /v1/token/join", s.rotateJoin)
	s.operatorRoutes()
	s.diagRoutes()
	s.actionRoutes()
	s.secretRoutes()
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r, ok := s.authorize(w, r)
	if !ok {
		return
	}
	if !limitBody(w, r) {
		return
	}
	s.serve(w, r)
}

// leaderOnly passes a request to the leader unless this node leads:
// claims and phases are the leader controller's soft state. ?stale lets a
// follower answer from its own copy. A request another node already
// forwarded is refused rather than passed on again.
func (s *Server) leaderOnly(h http.HandlerFunc) http.HandlerFunc {
	return s.leaderOr(h, s.proxy.Serve)
}

// leaderOr is leaderOnly with relay passing the request on to the leader.
func (s *Server) leaderOr(h http.HandlerFunc, relay func(w http.ResponseWriter, r *http.Request, leader string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.node.IsLeader() || (r.Method == http.MethodGet && r.URL.Query().Has("stale")) {
			h(w, r)
			return
		}
		leader := s.node.LeaderHTTP()
		if leader == "" {
			e := fault.Errorf(fault.KindNoLeader, "node %s has no leader to forward to; the control plane may have lost its quorum, try again or ask another node", s.node.NodeID())
			e.Node = s.node.NodeID()
			fault.Write(w, e)
			return
		}
		if forward.Forwarded(r) {
			e := fault.Errorf(fault.KindNotLeader, "node %s is not the leader either (it takes %s for the leader); leadership is moving, try again",
				s.node.NodeID(), leader)
			e.Leader, e.Node = leader, s.node.NodeID()
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
func (s *Server) read(w http.ResponseWriter, r *http.Request) bool {
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
		if r.URL.Path == "/v1/status" || r.URL.Path == timelinePath {
			// Phases also move without a new entry: a unit found
			// unchanged once rebuilt settles where it stands, a claim
			// ends. Only the generation the caller saw says whether one
			// moved since; without it, the next change is waited for.
			moved := s.ctl.Changed()
			if hasGen {
				moved = s.ctl.ChangedSince(gen)
			}
			applied := s.applyingDone()
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
		_, reset, err := s.node.WaitIndex(ctx, after)
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
		w.Header().Set("X-Fixpoint-Last-Contact", s.node.LastContact().String())
		return true
	}
	if err := s.node.Linearize(r.Context()); err != nil {
		writeError(w, http.StatusServiceUnavailable, "linearizable read: %v (add ?stale to read this node's copy)", err)
		return false
	}
	return true
}

// status answers GET /v1/status: the full status, or with ?summary=1 its
// summary (engine.Summary), which is what waiters poll: its size and cost
// do not grow with a line per unit.
func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	summary, err := summaryParam(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if !s.read(w, r) {
		return
	}
	if summary {
		sum, err := s.ctl.Summary(engine.SummaryLimit)
		if err != nil {
			writeError(w, http.StatusInternalServerError, "status summary: %v", err)
			return
		}
		if s.applyingDone() != nil {
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
	s.markApplying(st)
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

func (s *Server) state(w http.ResponseWriter, r *http.Request) {
	reveal, ok := s.reveal(w, r)
	if !ok || !s.read(w, r) {
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

func (s *Server) deploy(w http.ResponseWriter, r *http.Request) {
	var req DeployRequest
	// User secrets are compared with a linearizable read: a stale copy
	// could take a value for the latest revision's that is not.
	if !decode(w, r, &req) || (req.hasSecrets() && !s.read(w, r)) || !s.reviseSecrets(w, &req) {
		return
	}
	d := req.Deploy
	for h := range d.Charms {
		// Uploaded to another node, or known from an earlier deploy
		// that this node missed: fetch it from a peer.
		if err := s.ensure(r.Context(), s.charmBlobs(), h); err != nil {
			writeError(w, http.StatusBadRequest, "charm %s is on no node: upload it with PUT /v1/charms/%s first (%v)", h, h, err)
			return
		}
	}
	if !s.ensureResources(w, r, &d) {
		return
	}
	s.propose(w, r, &model.Command{Op: model.OpDeploy, Deploy: &d})
}

// Resolve is the body of POST /v1/resolved: one unit, every unit of a
// service in error, or every unit in error (exactly one of Unit, Service
// and All). A batch is one command; the answer's resolved lists the
// units it marked.
type Resolve struct {
	Unit    string `json:"unit"`
	Service string `json:"service,omitempty"`
	All     bool   `json:"all,omitempty"`
	NoRetry bool   `json:"no_retry"`
}

func (s *Server) resolved(w http.ResponseWriter, r *http.Request) {
	var req Resolve
	if !decode(w, r, &req) {
		return
	}
	s.propose(w, r, &model.Command{Op: model.OpResolve, Resolve: &model.ResolveUnit{Unit: req.Unit, Service: req.Service, All: req.All, NoRetry: req.NoRetry}})
}

func (s *Server) universe(w http.ResponseWriter, r *http.Request) {
	unit := r.PathValue("service") + "/" + r.PathValue("n")
	reveal, ok := s.reveal(w, r)
	if !ok || !s.read(w, r) {
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

func (s *Server) explain(w http.ResponseWriter, r *http.Request) {
	unit := r.PathValue("service") + "/" + r.PathValue("n")
	reveal, ok := s.reveal(w, r)
	if !ok || !s.read(w, r) {
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

func (s *Server) work(w http.ResponseWriter, r *http.Request) {
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
	work, err := s.ctl.WaitForWork(r.Context(), machine, max, wait)
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

func (s *Server) heartbeat(w http.ResponseWriter, r *http.Request) {
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
	s.ctl.Heartbeat(machine)
	if hb.Running != nil {
		s.ctl.ReleaseExcept(machine, hb.Running)
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

func (s *Server) results(w http.ResponseWriter, r *http.Request) {
	machine := r.URL.Query().Get("machine")
	var reports []wire.Report
	if !decode(w, r, &reports) {
		return
	}
	resp, err := s.ctl.Accept(r.Context(), machine, reports)
	if err != nil {
		writeStoreError(w, err, "")
		return
	}
	writeCompact(w, http.StatusOK, resp)
}

// writeJSON answers with v as indented JSON, for people reading it with
// curl.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// writeCompact answers the agents' requests with compact JSON: they are
// the many (work with its universes, registrations, results, heartbeats),
// nobody reads them by eye, and indenting costs a second pass over every
// answer.
func writeCompact(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 256<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		requestError(w, err)
		return false
	}
	return true
}
