package api

import (
	"context"
	"net/http"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
)

// DeployRequest is the body of POST /v1/deploy and POST /v1/plan: the
// deploy, and the values of its user secrets, which the CLI read from the
// files and variables the environment names. The values stay in this
// request: the node that takes it seals what changed into the deploy's
// SecretRevisions (model.ReviseUserSecrets) and forgets them. Both routes
// are the operator credential's only (allowed).
type DeployRequest struct {
	model.Deploy
	// SecretValues are the user secrets' values, by secret name, then key.
	SecretValues map[string]map[string]string `json:"secret_values,omitempty"`
}

// hasSecrets says whether the request declares or carries user secrets.
func (req *DeployRequest) hasSecrets() bool {
	return len(req.Deploy.Env.Secrets) > 0 || len(req.SecretValues) > 0
}

// reviseSecrets replaces whatever sealed revisions the request carried
// with the new revisions of the user secrets whose values changed,
// sealed here, against this node's copy of the state, read
// linearizably by the caller: a deploy stamped with the index planned
// against (BaseIndex) is refused if the secrets moved since, as any other
// change of the environment. It answers 400
// and returns false when the values do not fit the declaration.
func (s *changeAPI) reviseSecrets(w http.ResponseWriter, req *DeployRequest) bool {
	req.Deploy.SecretRevisions = nil
	if !req.hasSecrets() {
		return true
	}
	var revs map[string]string
	err := s.node.View(func(st *model.State) (err error) {
		revs, err = model.ReviseUserSecrets(st, &req.Deploy.Env, req.SecretValues)
		return err
	})
	req.SecretValues = nil
	if err != nil {
		writeKind(w, fault.KindBadRequest, "deploy: %v", err)
		return false
	}
	if len(revs) > 0 {
		req.Deploy.SecretRevisions = revs
	}
	return true
}

// DeploySecrets is Deploy with the values of the environment's user
// secrets, by name then key.
func (c *OperatorClient) DeploySecrets(ctx context.Context, d *model.Deploy, values map[string]map[string]string) (*model.Response, error) {
	var resp model.Response
	err := c.postJSON(ctx, "/v1/deploy", &DeployRequest{Deploy: *d, SecretValues: values}, &resp)
	return &resp, err
}

// PlanSecrets is Plan with the values of the environment's user secrets:
// the plan then says which secrets get a new revision.
func (c *OperatorClient) PlanSecrets(ctx context.Context, d *model.Deploy, values map[string]map[string]string) (*Plan, error) {
	var p Plan
	err := c.postJSON(ctx, "/v1/plan", &DeployRequest{Deploy: *d, SecretValues: values}, &p)
	return &p, err
}
