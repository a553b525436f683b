package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
)

// OperatorClient is what an operator asks of the control plane: status
// and the state, deploys and their plans, resolving, units, config,
// uploads, machines, operations and secrets.
type OperatorClient struct{ *conn }

// Status returns the environment's status. With index > 0 it blocks until
// the state moves past index or wait passes.
func (c *OperatorClient) Status(ctx context.Context, stale bool, index uint64, wait time.Duration) (*engine.Status, error) {
	var st engine.Status
	_, err := c.do(ctx, http.MethodGet, "/v1/status"+query(stale, index, wait), nil, &st)
	return &st, err
}

// WaitStatus returns the status once it moved past prev (nil: at once): a
// new entry, or a change without one (a claim taken or ended, a unit
// settling), which prev's generation tells the server about. It returns
// prev's equal after wait if nothing moved.
func (c *OperatorClient) WaitStatus(ctx context.Context, stale bool, prev *engine.Status, wait time.Duration) (*engine.Status, error) {
	if prev == nil {
		return c.Status(ctx, stale, 0, 0)
	}
	var st engine.Status
	_, err := c.do(ctx, http.MethodGet, statusWaitPath(stale, prev.Index, prev.Generation, wait, false), nil, &st)
	return &st, err
}

// WaitSummary is WaitStatus for the status summary (GET
// /v1/status?summary=1): what a waiter polls, whose size does not grow
// with the units.
func (c *OperatorClient) WaitSummary(ctx context.Context, stale bool, prev *engine.Summary, wait time.Duration) (*engine.Summary, error) {
	var sum engine.Summary
	path := "/v1/status?summary=1"
	switch {
	case prev != nil:
		path = statusWaitPath(stale, prev.Index, prev.Generation, wait, true)
	case stale:
		path += "&stale"
	}
	_, err := c.do(ctx, http.MethodGet, path, nil, &sum)
	return &sum, err
}

// State returns the whole replicated state.
func (c *OperatorClient) State(ctx context.Context, stale bool) (*model.State, error) {
	st := model.NewState()
	_, err := c.do(ctx, http.MethodGet, c.withReveal("/v1/state"+query(stale, 0, 0)), nil, st)
	st.Normalize()
	return st, err
}

// Deploy makes env desired; charms must have been uploaded.
func (c *OperatorClient) Deploy(ctx context.Context, d *model.Deploy) (*model.Response, error) {
	var resp model.Response
	err := c.postJSON(ctx, "/v1/deploy", d, &resp)
	return &resp, err
}

// Env reads the environment's document (GET /v1/env): an edit of it
// deploys back with BaseIndex set to its Revision and its Charms, and is
// refused with ErrEnvMoved (a conflict) when the environment moved
// meanwhile. It is
// ErrNotFound before any apply.
func (c *OperatorClient) Env(ctx context.Context) (*EnvDoc, error) {
	var doc EnvDoc
	if _, err := c.do(ctx, http.MethodGet, "/v1/env", nil, &doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

// Plan asks the control plane what deploying d would change, without
// proposing it (POST /v1/plan).
func (c *OperatorClient) Plan(ctx context.Context, d *model.Deploy) (*Plan, error) {
	var p Plan
	err := c.postJSON(ctx, "/v1/plan", d, &p)
	return &p, err
}

// Resolved marks a unit in error resolved.
func (c *OperatorClient) Resolved(ctx context.Context, unit string, noRetry bool) error {
	return c.postJSON(ctx, "/v1/resolved", Resolve{Unit: unit, NoRetry: noRetry}, nil)
}

// ResolveBatch marks every unit of service in error resolved, or with
// service "" every unit in error, as one command; the answer lists the
// units marked (model.Response.Resolved).
func (c *OperatorClient) ResolveBatch(ctx context.Context, service string, noRetry bool) (*model.Response, error) {
	var resp model.Response
	err := c.postJSON(ctx, "/v1/resolved", Resolve{Service: service, All: service == "", NoRetry: noRetry}, &resp)
	return &resp, err
}

// Universe returns what unit's hook would be given now.
func (c *OperatorClient) Universe(ctx context.Context, unit string) (json.RawMessage, error) {
	var raw json.RawMessage
	_, err := c.do(ctx, http.MethodGet, c.withReveal("/v1/universe/"+escapeUnit(unit)), nil, &raw)
	return raw, err
}

// Unit returns one unit's detail (GET /v1/units/UNIT).
func (c *OperatorClient) Unit(ctx context.Context, name string) (*engine.UnitDetail, error) {
	var d engine.UnitDetail
	_, err := c.do(ctx, http.MethodGet, c.withReveal("/v1/units/"+escapeUnit(name)), nil, &d)
	return &d, err
}

// ServiceConfig returns a service's effective config (GET
// /v1/services/SERVICE/config).
func (c *OperatorClient) ServiceConfig(ctx context.Context, service string) (*ServiceConfig, error) {
	var sc ServiceConfig
	_, err := c.do(ctx, http.MethodGet, c.withReveal("/v1/services/"+url.PathEscape(service)+"/config"), nil, &sc)
	return &sc, err
}

// Explain says why unit is stale, settled or in error (GET
// /v1/explain/UNIT).
func (c *OperatorClient) Explain(ctx context.Context, unit string) (*engine.Explanation, error) {
	var e engine.Explanation
	_, err := c.do(ctx, http.MethodGet, c.withReveal("/v1/explain/"+escapeUnit(unit)), nil, &e)
	return &e, err
}

// UploadCharm sends a packed charm archive, unless the node has it.
func (c *OperatorClient) UploadCharm(ctx context.Context, hash, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	_, err = c.do(ctx, http.MethodPut, "/v1/charms/"+hash, data, nil)
	return err
}

// ResetMachine drops machine's credential, or the machine itself with
// forget (operator).
func (c *OperatorClient) ResetMachine(ctx context.Context, machine string, forget bool) (*model.Response, error) {
	var resp model.Response
	err := c.postJSON(ctx, "/v1/machines/"+url.PathEscape(machine)+"/reset", ResetMachine{Forget: forget}, &resp)
	return &resp, err
}

// SetJoinToken makes hash the join token's (empty: revoke joining), valid
// until expires unless that is zero (operator).
func (c *OperatorClient) SetJoinToken(ctx context.Context, hash string, expires time.Time) (*model.Response, error) {
	var resp model.Response
	err := c.postJSON(ctx, "/v1/token/join", JoinToken{Hash: hash, Expires: expires}, &resp)
	return &resp, err
}

// UploadResource sends a resource file under its sha256 digest, checked
// before it is sent (operator).
func (c *OperatorClient) UploadResource(ctx context.Context, digest, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if int64(len(data)) > model.MaxResourceSize {
		return fmt.Errorf("%s is %d bytes, more than the %d a resource may be", path, len(data), model.MaxResourceSize)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != digest {
		return fmt.Errorf("%s changed since it was read: its digest is no longer %s; run the command again", path, model.ShortHash(digest))
	}
	_, err = c.do(ctx, http.MethodPut, "/v1/resources/"+digest, data, nil)
	return err
}
