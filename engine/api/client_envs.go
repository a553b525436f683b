package api

import (
	"context"
	"net/http"
	"net/url"
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

// RemoveEnv drops an emptied environment (cluster operator).
func (c *OperatorClient) RemoveEnv(ctx context.Context, name string) error {
	return c.Do(ctx, http.MethodDelete, "/v1/envs/"+url.PathEscape(name), nil, nil)
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
