// Package api is the control plane's HTTP interface for operators and
// agents, and the client both use. Node-to-node Raft endpoints live in
// raftstore; this package mounts them under /v1/raft/.
//
// Server is the front: it authorizes, caps bodies, counts and routes.
// Each group of routes is a type holding only what it uses: statusAPI
// (operators' reads), changeAPI (operators' writes), agentAPI, actionAPI
// (operations), secretAPI, diagAPI (debug log, events, profiles),
// fileStore (charm and resource files) and healthAPI (probes); gate says
// where and as of when each request is answered. Client is a shared
// connection (conn) with the OperatorClient, AgentClient and DiagClient
// method sets.
package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/memgov"
	"github.com/fixpoint/fixpoint/model"
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
	// ViewCluster runs fn with every environment and the environment
	// tokens, under the read lock View holds.
	ViewCluster(fn func(*model.Cluster) error) error
	// AddEnv makes an environment and returns its uuid; RemoveEnv drops
	// an emptied one. Each is judged before it is proposed.
	AddEnv(ctx context.Context, name string, share *model.EnvShare) (string, error)
	RemoveEnv(ctx context.Context, name string) error
}

// Config configures a Server.
type Config struct {
	Node       Node
	Controller *engine.Controller
	// Agents, when set, serves the agents' work, results and heartbeats
	// over every environment (engine/fleet); else Controller serves
	// them, for the default environment alone.
	Agents Agents
	// Envs gives each environment's controller to the routes under
	// /v1/envs/{env}/ (envroute.go); when nil and Agents provides it
	// (engine/fleet.Fleet does), Agents serves. Without either, those
	// routes serve the default environment's controller alone.
	Envs Controllers
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
	// Memory, when set, paces the agents' intake under memory pressure
	// (intake) and is reported in the metrics.
	Memory *memgov.Governor
}

// Server serves the API of one control-plane node. It is the front:
// it authorizes each request, caps its body, counts it, and routes it to
// the part that serves it (NewServer wires them).
type Server struct {
	node     Node
	ctl      *engine.Controller
	log      hclog.Logger
	mux      *router
	metrics  *metrics
	creds    credentials
	catchUp  *catchUp
	applying *applying
	// envs gives the environments' controllers; nil serves none but the
	// default one.
	envs Controllers
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
	node, ctl, log := cfg.Node, cfg.Controller, cfg.Log
	envs := cfg.Envs
	if envs == nil {
		envs, _ = cfg.Agents.(Controllers)
	}
	s := &Server{node: node, ctl: ctl, log: log, mux: newRouter(),
		metrics: newMetrics(node, ctl, envs, log), catchUp: newCatchUp(node), applying: &applying{}, envs: envs}
	s.mux.inEnv = s.inEnv
	proxy := forward.NewProxy(cfg.Transport, cfg.PeerClient, node.NodeID())
	g := &gate{node: node, ctl: ctl, proxy: proxy, applying: s.applying}
	files := &fileStore{node: node, catchUp: s.catchUp, dir: cfg.CharmDir, peers: cfg.Peers, peerClient: forward.NewClient(cfg.PeerClient, node.NodeID()), log: log}
	files.routes(s.mux)
	(&statusAPI{node: node, ctl: ctl, gate: g, applying: s.applying, log: log}).routes(s.mux)
	(&changeAPI{node: node, gate: g, files: files}).routes(s.mux)
	(&envAPI{node: node, gate: g, log: log}).routes(s.mux)
	(&envsAPI{node: node, log: log}).routes(s.mux)
	agents := cfg.Agents
	if agents == nil {
		agents = oneEnv{ctl: ctl}
	} else if envs != nil {
		agents = observingAgents{Agents: agents, series: s.metrics.envs}
	}
	(&agentAPI{node: node, agents: agents, gate: g, proxy: proxy, log: log, mem: cfg.Memory}).routes(s.mux)
	(&actionAPI{node: node, ctl: ctl, agents: agents, gate: g, catchUp: s.catchUp, log: log}).routes(s.mux)
	(&secretAPI{node: node, gate: g, log: log}).routes(s.mux)
	(&diagAPI{node: node, gate: g, log: log, logSlots: make(chan struct{}, logSlots), mem: cfg.Memory}).routes(s.mux)
	(&healthAPI{node: node, waiting: cfg.Waiting}).routes(s.mux)
	uiRoutes(s.mux)
	if cfg.Memory != nil {
		s.metrics.reg.MustRegister(memoryCollector{cfg.Memory})
	}
	s.mux.Handle("GET /metrics", s.metrics.handler())
	s.mux.Handle("/v1/raft/", node.Handler())
	// Writes other nodes pass on for their callers, several to a request;
	// each is authorized on its own (authorize lets only the nodes'
	// operator credential send a batch).
	s.mux.HandleFunc("POST "+forward.BatchPath, func(w http.ResponseWriter, r *http.Request) { forward.ServeBatch(w, r, s) })
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
