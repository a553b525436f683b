package api

import (
	"errors"
	"net/http"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
)

// EnvDoc is the answer of GET /v1/env: the environment as it is desired
// now (model.State.EnvDocument), the revision to deploy an edit of it
// against (model.Deploy.BaseIndex) and the charms it names, so that the
// edit deploys without uploading them again.
type EnvDoc struct {
	Name string `json:"name"`
	// Revision is the environment's EnvIndex.
	Revision uint64            `json:"revision"`
	Env      model.Environment `json:"env"`
	// Charms are the charms the document's services run, by hash.
	Charms map[string]*model.Charm `json:"charms"`
}

// envAPI serves the environment's document.
type envAPI struct {
	node Node
	gate *gate
	log  hclog.Logger
}

func (s *envAPI) routes(mux *router) {
	mux.HandleFunc("GET /v1/env", s.env)
}

// env answers GET /v1/env from a linearizable read (or this node's copy,
// with ?stale). Secret config values are redacted but for ?reveal=1
// (the operator's only); a redacted document deploys back keeping them
// (model.State.Unredact).
func (s *envAPI) env(w http.ResponseWriter, r *http.Request) {
	s = s.in(r)
	show, ok := reveal(s.log, w, r)
	if !ok || !s.gate.read(w, r) {
		return
	}
	var doc *EnvDoc
	var derr error
	_ = s.node.View(func(st *model.State) error {
		env, err := st.EnvDocument()
		if err != nil {
			derr = err
			return nil
		}
		doc = &EnvDoc{Name: st.Name, Revision: st.EnvIndex, Charms: map[string]*model.Charm{}}
		for _, spec := range env.Services {
			if ch := st.Charms[spec.CharmHash]; ch != nil {
				doc.Charms[spec.CharmHash] = ch
			}
		}
		if !show {
			env = model.RedactDocument(env, doc.Charms)
		}
		// The document is replaced whole, never edited: it is encoded
		// after the read lock goes.
		doc.Env = *env
		return nil
	})
	var gaps *model.DocumentGapsError
	switch {
	case errors.Is(derr, model.ErrNoEnvironment):
		fault.Write(w, fault.From(derr, fault.KindNotFound))
	case errors.As(derr, &gaps):
		writeKind(w, fault.KindRefused, "%v", derr)
	case derr != nil:
		writeStoreError(w, derr, "read the environment")
	default:
		writeCompact(w, http.StatusOK, doc)
	}
}
