package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/fixpoint/fixpoint/model"
)

// Enqueue queues an operation (`fixpoint run`, `fixpoint exec`) and
// returns its id.
func (c *OperatorClient) Enqueue(ctx context.Context, e *Enqueue) (int, error) {
	var resp model.Response
	if err := c.postJSON(ctx, "/v1/actions", e, &resp); err != nil {
		return 0, err
	}
	switch {
	case resp.Action == 0 && resp.Duplicate:
		return 0, fmt.Errorf("this request was applied before (index %d) and its operation can no longer be told apart: list them with fixpoint operations --unit %s", resp.Index, e.Unit)
	case resp.Action == 0:
		return 0, fmt.Errorf("the control plane queued no operation (index %d)", resp.Index)
	}
	return resp.Action, nil
}

// Operation returns operation id, waiting up to wait for it to finish.
func (c *OperatorClient) Operation(ctx context.Context, id int, wait time.Duration) (*model.Action, error) {
	var a model.Action
	path := fmt.Sprintf("/v1/actions/%d", id)
	if wait > 0 {
		path += "?wait=" + url.QueryEscape(wait.String())
	}
	if _, err := c.do(ctx, http.MethodGet, path, nil, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// Operations lists operations by unit, service and status (each may be
// empty; status may be comma-separated).
func (c *OperatorClient) Operations(ctx context.Context, unit, service, status string) ([]model.Action, error) {
	q := url.Values{}
	for k, v := range map[string]string{"unit": unit, "service": service, "status": status} {
		if v != "" {
			q.Set(k, v)
		}
	}
	var out []model.Action
	if _, err := c.do(ctx, http.MethodGet, "/v1/actions?"+q.Encode(), nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}
