package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/fixpoint/fixpoint/model/fault"
)

// AddEnv makes an environment; zero caps take the cluster's limits
// (cluster operator).
func (c *OperatorClient) AddEnv(ctx context.Context, req NewEnv) (*EnvInfo, error) {
	var out EnvInfo
	err := c.postJSON(ctx, "/v1/envs", req, &out)
	return &out, err
}

// Envs lists the environments, the default one first (cluster operator).
func (c *OperatorClient) Envs(ctx context.Context) ([]EnvInfo, error) {
	var out []EnvInfo
	err := c.Do(ctx, http.MethodGet, "/v1/envs", nil, &out)
	return out, err
}

// ShowEnv describes one environment (cluster operator).
func (c *OperatorClient) ShowEnv(ctx context.Context, name string) (*EnvInfo, error) {
	var out EnvInfo
	err := c.Do(ctx, http.MethodGet, "/v1/envs/"+url.PathEscape(name), nil, &out)
	return &out, err
}

// RemoveEnv removes environment name end to end (cluster operator): its
// units run their dying hooks, then it is dropped with its tokens,
// secrets and storage. It returns once the environment is gone, or when
// ctx ends. RemoveEnvWith takes options.
func (c *OperatorClient) RemoveEnv(ctx context.Context, name string) error {
	return c.RemoveEnvWith(ctx, name, RemoveEnvOptions{})
}

// RemoveEnvOptions are RemoveEnvWith's options.
type RemoveEnvOptions struct {
	// Force drops the units left on lost machines without their hooks,
	// as Juju's destroy-model --force.
	Force bool
	// Progress, when set, is told what the environment still holds after
	// every answer that is not the end.
	Progress func(EnvRemoval)
}

// envRemoveWait is how long one DELETE /v1/envs/{env} waits for the
// dying hooks before it answers what remains.
const envRemoveWait = 30 * time.Second

// RemoveEnvWith is RemoveEnv with options: it asks DELETE
// /v1/envs/{env} again while the answer says units remain (202), until
// the environment is gone (204).
func (c *OperatorClient) RemoveEnvWith(ctx context.Context, name string, opts RemoveEnvOptions) error {
	path := "/v1/envs/" + url.PathEscape(name) + "?wait=" + envRemoveWait.String()
	if opts.Force {
		path += "&force=1"
	}
	answered := false
	for {
		var body bytes.Buffer
		if err := c.Do(ctx, http.MethodDelete, path, nil, &body); err != nil {
			// Gone between two asks: an earlier ask's drop landed.
			if e := (*fault.Error)(nil); answered && errors.As(err, &e) && e.Kind == fault.KindNotFound {
				return nil
			}
			return err
		}
		if body.Len() == 0 {
			return nil
		}
		var left EnvRemoval
		if err := json.Unmarshal(body.Bytes(), &left); err != nil {
			return fmt.Errorf("remove environment %s: decode the answer: %w", name, err)
		}
		answered = true
		if opts.Progress != nil {
			opts.Progress(left)
		}
	}
}

// CreateToken makes an environment token; the answer holds the token,
// which nothing shows again (cluster operator).
func (c *OperatorClient) CreateToken(ctx context.Context, req NewEnvToken) (*EnvTokenInfo, error) {
	var out EnvTokenInfo
	err := c.postJSON(ctx, "/v1/tokens", req, &out)
	return &out, err
}

// Tokens lists environment tokens, without the tokens: env's alone unless
// all (cluster operator).
func (c *OperatorClient) Tokens(ctx context.Context, env string, all bool) ([]EnvTokenInfo, error) {
	path := "/v1/tokens"
	if !all {
		path += "?env=" + url.QueryEscape(env)
	}
	var out []EnvTokenInfo
	err := c.Do(ctx, http.MethodGet, path, nil, &out)
	return out, err
}

// RevokeToken revokes env's token named ref, or the token whose id is ref
// (cluster operator).
func (c *OperatorClient) RevokeToken(ctx context.Context, env, ref string) error {
	path := "/v1/tokens/" + url.PathEscape(ref)
	if env != "" {
		path += "?env=" + url.QueryEscape(env)
	}
	return c.Do(ctx, http.MethodDelete, path, nil, nil)
}
