package api

import (
	"net/http"
	"slices"

	"github.com/fixpoint/fixpoint/model"
)

// Plan is the answer of POST /v1/plan: what deploying the environment in
// the request would change in the running one, planned where the state
// is. `fixpoint plan` and `apply` read it instead of the whole state,
// which is a record per unit and grows with the environment; this grows
// with the change.
type Plan struct {
	// Name is the running environment's name ("" before the first
	// deploy).
	Name string `json:"name"`
	// EnvIndex is the index of the environment planned against: a deploy
	// stamped with it (model.Deploy.BaseIndex) is refused if another
	// lands first.
	EnvIndex uint64         `json:"env_index"`
	Changes  []model.Change `json:"changes"`
	// Missing are the request's charms (by hash) the control plane does
	// not have yet: the ones to upload before the deploy.
	Missing []string `json:"missing"`
}

// plan answers POST /v1/plan with the body of a deploy: it is checked as
// the deploy would be, and planned against a linearizable read of the
// state (or this node's copy, with ?stale). Nothing is proposed.
func (s *Server) plan(w http.ResponseWriter, r *http.Request) {
	var d model.Deploy
	if !decode(w, r, &d) {
		return
	}
	cmd := &model.Command{Op: model.OpDeploy, Deploy: &d}
	desired, err := cmd.Check()
	if err != nil {
		writeInvalid(w, cmd, err)
		return
	}
	if !s.read(w, r) {
		return
	}
	var p *Plan
	_ = s.node.View(func(st *model.State) error {
		p = NewPlan(st, &d, desired)
		return nil
	})
	writeCompact(w, http.StatusOK, p)
}

// NewPlan is the plan of deploying d, whose environment resolves to
// desired, onto st. A CLI that meets a control plane without POST
// /v1/plan makes it from the state it read.
func NewPlan(st *model.State, d *model.Deploy, desired *model.Desired) *Plan {
	p := &Plan{Name: st.Name, EnvIndex: st.EnvIndex, Changes: model.Plan(st, desired), Missing: []string{}}
	if p.Changes == nil {
		p.Changes = []model.Change{}
	}
	for h := range d.Charms {
		if _, ok := st.Charms[h]; !ok {
			p.Missing = append(p.Missing, h)
		}
	}
	slices.Sort(p.Missing)
	return p
}
