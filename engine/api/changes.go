package api

import (
	"net/http"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
)

// changeAPI serves the operators' writes: deploys and their plans,
// resolving units in error, resetting machines and the join token.
type changeAPI struct {
	node  Node
	gate  *gate
	files *fileStore
}

func (s *changeAPI) routes(mux *router) {
	mux.HandleFunc("POST /v1/deploy", s.deploy)
	mux.HandleFunc("POST /v1/plan", s.plan)
	mux.HandleFunc("POST /v1/resolved", s.resolved)
	mux.HandleFunc("POST /v1/machines/{name}/reset", s.resetMachine)
	mux.HandleFunc("POST /v1/token/join", s.rotateJoin)
}

func (s *changeAPI) deploy(w http.ResponseWriter, r *http.Request) {
	s = s.in(r)
	var req DeployRequest
	// User secrets are compared with a linearizable read: a stale copy
	// could take a value for the latest revision's that is not.
	if !decode(w, r, &req) || (req.hasSecrets() && !s.gate.read(w, r)) || !s.reviseSecrets(w, &req) {
		return
	}
	d := req.Deploy
	unredact(s.node, &d)
	// The document is kept only once every server keeps it alike.
	level := s.node.ClusterLevel().Level
	d.Record = level >= model.LevelRecorded
	if len(d.RemoveUnits) > 0 && !d.Record {
		// The leader's gate would refuse it too, as a conflict a client
		// might retry; this says what to do.
		writeKind(w, fault.KindRefused, "removing units by name needs the cluster's feature level %d and it is at %d: run fixpoint cluster upgrade once every server runs this build", model.LevelRecorded, level)
		return
	}
	for h := range d.Charms {
		// Uploaded to another node, or known from an earlier deploy
		// that this node missed: fetch it from a peer.
		if err := s.files.ensure(r.Context(), s.files.charmBlobs(), h); err != nil {
			writeError(w, http.StatusBadRequest, "charm %s is on no node: upload it with PUT /v1/charms/%s first (%v)", h, h, err)
			return
		}
	}
	if !s.files.ensureResources(w, r, &d) {
		return
	}
	propose(s.node, w, r, &model.Command{Op: model.OpDeploy, Deploy: &d})
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

func (s *changeAPI) resolved(w http.ResponseWriter, r *http.Request) {
	s = s.in(r)
	var req Resolve
	if !decode(w, r, &req) {
		return
	}
	propose(s.node, w, r, &model.Command{Op: model.OpResolve, Resolve: &model.ResolveUnit{Unit: req.Unit, Service: req.Service, All: req.All, NoRetry: req.NoRetry}})
}

// unredact gives back the secret config values a document read redacted
// (GET /v1/env) carries as their redactions (model.State.Unredact).
func unredact(node Node, d *model.Deploy) {
	_ = node.View(func(st *model.State) error {
		st.Unredact(&d.Env, d.Charms)
		return nil
	})
}
