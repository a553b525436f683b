package api

import (
	"net/http"
	"strings"

	"github.com/fixpoint/fixpoint/model"
)

// Environment tokens (model.EnvToken) open one environment's routes and
// nothing of the cluster's. The unprefixed routes below are the default
// environment's, and each also answers under /v1/envs/{env}/ for the
// environment it names (envroute.go); every other registered route is the cluster's (machines,
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
// which the route pattern serves, or "". base is the unprefixed pattern
// of a prefixed one (router.unprefixed), whose environment the path
// names; an unprefixed route is the default environment's.
func envAllowed(p principal, r *http.Request, pattern string) string {
	base, isPrefixed := pattern, false
	env := ""
	if name, _, ok := splitEnvPath(r.URL.Path); ok {
		if b, ok := envPrefixedBase(pattern); ok {
			base, isPrefixed = b, true
			if name != p.defaultName {
				env = name
			}
		}
	}
	if !envRoutes[base] {
		return "an environment token opens only its environment's routes; this one is the cluster's (machines, join tokens, membership, environments and their tokens, the cluster key, raft): use the cluster's operator token"
	}
	if env != p.env {
		if !isPrefixed {
			return "the unprefixed routes are the default environment's, and " + p.envLabel + "'s own are under /v1/envs/" + p.env + "/ (the CLI's -e/--env " + p.env + ", or $FIXPOINT_ENV)"
		}
		return "it opens only " + p.envLabel + "'s routes, not environment " + model.Quote(env, 72) + "'s: use a token of that environment, or the cluster's operator token"
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

// envPrefixedBase is the unprefixed pattern of a prefixed pattern.
func envPrefixedBase(pattern string) (string, bool) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "", pattern
	}
	rest, found := strings.CutPrefix(path, envPrefix+"{env}/")
	if !found {
		return pattern, false
	}
	if method != "" {
		method += " "
	}
	return method + "/v1/" + rest, true
}
