package api

import (
	"fmt"
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
	// not have yet, or that the node answering lacks on its disk: the
	// ones to upload, to that node, before the deploy.
	Missing []string `json:"missing"`
	// MissingResources are the request's resource files (by digest) the
	// node answering lacks: the ones to upload to it before the deploy.
	MissingResources []string `json:"missing_resources"`
}

// plan answers POST /v1/plan with the body of a deploy: it is checked as
// the deploy would be, and planned against a linearizable read of the
// state (or this node's copy, with ?stale). Nothing is proposed.
func (s *changeAPI) plan(w http.ResponseWriter, r *http.Request) {
	s = s.in(r)
	var req DeployRequest
	if !decode(w, r, &req) {
		return
	}
	d := req.Deploy
	d.SecretRevisions = nil
	if err := fileInEnv(s.node, envOf(r), d.Env.Name); err != nil {
		writeStoreError(w, err, "")
		return
	}
	unredact(s.node, &d)
	cmd := &model.Command{Op: model.OpDeploy, Deploy: &d}
	desired, err := cmd.Check()
	if err != nil {
		writeInvalid(w, cmd, err)
		return
	}
	if !s.gate.read(w, r) {
		return
	}
	if req.hasSecrets() {
		// The user secrets whose values changed get a revision: the
		// plan says so.
		if !s.reviseSecrets(w, &req) {
			return
		}
		d.SecretRevisions = req.Deploy.SecretRevisions
		if desired, err = cmd.Check(); err != nil {
			writeInvalid(w, cmd, err)
			return
		}
	}
	var p *Plan
	err = s.node.View(func(st *model.State) (err error) {
		p, err = NewPlan(st, &d, desired)
		return err
	})
	if err != nil {
		writeStoreError(w, fmt.Errorf("%w: %w", ErrRefused, err), "")
		return
	}
	// A node takes a deploy only with its charms on its disk, and fetches
	// those it lacks from its peers. A charm the state knows may be on
	// no reachable peer: the archive is pushed to them after its upload,
	// best effort, and the leader that took it may be cut off since. The
	// CLI has the archive; it uploads it again to the node it deploys
	// through.
	for h := range d.Charms {
		if !s.files.charmBlobs().has(h) && !slices.Contains(p.Missing, h) {
			p.Missing = append(p.Missing, h)
		}
	}
	slices.Sort(p.Missing)
	p.MissingResources = s.files.missingResources(&d)
	writeCompact(w, http.StatusOK, p)
}

// NewPlan is the plan of deploying d, whose environment resolves to
// desired, onto st. A CLI that meets a control plane without POST
// /v1/plan makes it from the state it read. An environment over st's
// limits is refused before a unit is named.
func NewPlan(st *model.State, d *model.Deploy, desired *model.Desired) (*Plan, error) {
	if err := st.CheckLimits(desired); err != nil {
		return nil, err
	}
	if err := st.CheckRemoveUnits(desired); err != nil {
		return nil, err
	}
	p := &Plan{Name: st.Name, EnvIndex: st.EnvIndex, Changes: model.Plan(st, desired), Missing: []string{}, MissingResources: []string{}}
	for _, h := range desired.ResourceDigests() {
		if !st.HasResource(h) {
			p.MissingResources = append(p.MissingResources, h)
		}
	}
	if p.Changes == nil {
		p.Changes = []model.Change{}
	}
	for h := range d.Charms {
		if _, ok := st.Charms[h]; !ok {
			p.Missing = append(p.Missing, h)
		}
	}
	slices.Sort(p.Missing)
	return p, nil
}
