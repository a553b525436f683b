package api

import (
	"net/http"

	"github.com/fixpoint/fixpoint/model"
)

// Environment tokens (model.EnvToken) open one environment's routes and
// nothing of the cluster's. The unprefixed routes below are the default
// environment's; every other registered route is the cluster's (machines,
// join tokens, membership, environments and their tokens, the cluster
// key, raft, profiles) or the agents', which no environment token opens.
// A route missing from this table is refused to every environment token,
// so that a route added later opens nothing until it is placed here.
var envRoutes = map[string]bool{
	"GET /v1/status":                    true,
	"GET " + timelinePath:               true,
	"GET /v1/state":                     true,
	"GET /v1/universe/{service}/{n}":    true,
	"GET /v1/explain/{service}/{n}":     true,
	"GET /v1/units/{unit...}":           true,
	"GET /v1/services/{service}/config": true,
	"GET /v1/relations":                 true,
	"GET /v1/logs":                      true,
	"GET /v1/env":                       true,
	"GET /v1/actions":                   true,
	"GET /v1/actions/{id}":              true,
	"GET /v1/secrets":                   true,
	"GET /v1/secrets/{id}":              true,
	"GET /v1/debug-log":                 true,
	"GET /v1/events":                    true,
	"GET /v1/charms/{hash}":             true,
	"GET /v1/resources/{hash}":          true,
	// Writes: an operator's of its environment only.
	"POST /v1/deploy":          true,
	"POST /v1/plan":            true,
	"POST /v1/resolved":        true,
	"POST /v1/actions":         true, // run and exec
	"PUT /v1/charms/{hash}":    true, // a deploy's charms
	"PUT /v1/resources/{hash}": true,
}

// envLabel names an environment token's environment in messages.
func envLabel(c *model.Cluster, env string) string {
	switch {
	case env != "":
		return "environment " + env
	case c.Default.Name != "":
		return "environment " + c.Default.Name + " (the default)"
	}
	return "the default environment"
}

// envAllowed returns why the environment token p may not make request r,
// which the route pattern serves, or "". The unprefixed routes are the
// default environment's: another environment's token is refused them
// until per-environment routes (/v1/envs/ENV/...) are served.
func envAllowed(p principal, r *http.Request, pattern string) string {
	if !envRoutes[pattern] {
		return "an environment token opens only its environment's routes; this one is the cluster's (machines, join tokens, membership, environments and their tokens, the cluster key, raft): use the cluster's operator token"
	}
	if p.env != "" {
		return "the unprefixed routes are the default environment's, and " + p.envLabel + "'s own routes (/v1/envs/" + p.env + "/...) come with per-environment serving, which this server does not offer yet; use a token of the default environment here"
	}
	if p.access == model.RoleOperator {
		return ""
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return "a reader token only reads (GET): changes, plans, runs and execs need an operator token of the environment"
	}
	if r.URL.Query().Has("reveal") {
		return "a reader token never sees secret values (?reveal, --reveal); ask without it to see them redacted"
	}
	return ""
}
