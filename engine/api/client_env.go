package api

import (
	"net/http"
	"net/url"
	"strings"
)

// A client names an environment (SetEnv, WithEnv) to send every
// environment-scoped request under /v1/envs/{env}/ (envroute.go); the
// cluster's routes and the agents' stay where they are. With none ("",
// the default) every path is sent as given, as a client before
// environments did, which is what `up` and the default environment's
// commands use.

// envScoped matches the paths of the environment-scoped routes: the
// server's own table (envRoutes), so that client and server agree.
var envScoped = func() *http.ServeMux {
	mux := http.NewServeMux()
	for pattern := range envRoutes {
		mux.Handle(pattern, http.NotFoundHandler())
	}
	return mux
}()

// envPath is path under environment env's prefix when method and path
// are an environment-scoped route, else path unchanged.
func envPath(env, method, path string) string {
	if env == "" || strings.HasPrefix(path, envPrefix) {
		return path
	}
	p, query, _ := strings.Cut(path, "?")
	u := &url.URL{Path: p}
	if raw, err := url.PathUnescape(p); err == nil {
		u = &url.URL{Path: raw, RawPath: p}
	}
	if _, pattern := envScoped.Handler(&http.Request{Method: method, URL: u, Host: "x"}); pattern == "" {
		return path
	}
	out := envPrefix + url.PathEscape(env) + "/" + strings.TrimPrefix(p, "/v1/")
	if query != "" {
		out += "?" + query
	}
	return out
}

// SetEnv makes the client's environment-scoped requests go to
// environment name's routes; "" is the default environment's (the
// unprefixed routes). It changes every client sharing this connection
// (the operator's, the agent's and the diagnostics' method sets).
func (c *conn) SetEnv(name string) {
	c.mu.Lock()
	c.env = name
	c.mu.Unlock()
}

// EnvName is the environment the client's requests go to, "" the
// default one.
func (c *conn) EnvName() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.env
}

// WithEnv returns a client of the same addresses, credential and
// transport whose environment-scoped requests go to environment name
// ("" the default); c is unchanged.
func (c *Client) WithEnv(name string) *Client {
	c.mu.Lock()
	cc := &conn{addrs: c.addrs, token: c.token, http: c.http, next: c.next, reveal: c.reveal, env: name}
	c.mu.Unlock()
	return &Client{conn: cc, OperatorClient: OperatorClient{cc}, AgentClient: AgentClient{conn: cc, id: &agentIdentity{}}, DiagClient: DiagClient{cc}}
}
