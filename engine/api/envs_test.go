package api_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// Routes by who may reach them; every registered pattern must be in one
// of these, so that a route added later is asked with every credential.
var (
	publicPatterns = map[string]bool{
		"GET /healthz": true, "GET /readyz": true, "GET /metrics": true, "GET /ui/": true, "GET /ui": true,
	}
	// envPatterns are the default environment's unprefixed routes.
	envPatterns = map[string]bool{
		"GET /v1/status": true, "GET /v1/status/timeline": true, "GET /v1/state": true,
		"GET /v1/universe/{service}/{n}": true, "GET /v1/explain/{service}/{n}": true,
		"GET /v1/units/{unit...}": true, "GET /v1/services/{service}/config": true,
		"GET /v1/relations": true, "GET /v1/logs": true, "GET /v1/env": true,
		"GET /v1/actions": true, "GET /v1/actions/{id}": true, "GET /v1/secrets": true,
		"GET /v1/secrets/{id}": true, "GET /v1/debug-log": true, "GET /v1/events": true,
		"GET /v1/charms/{hash}": true, "GET /v1/resources/{hash}": true,
		"POST /v1/deploy": true, "POST /v1/plan": true, "POST /v1/resolved": true,
		"POST /v1/actions": true, "PUT /v1/charms/{hash}": true, "PUT /v1/resources/{hash}": true,
	}
	// clusterPatterns are the cluster's and the agents'.
	clusterPatterns = map[string]bool{
		"POST /v1/machines/{name}/reset": true, "POST /v1/token/join": true,
		"POST /v1/secrets/rotate-key": true, "GET /v1/debug/applied": true,
		"/debug/pprof/": true, "/debug/pprof/profile": true, "/debug/pprof/trace": true,
		"/v1/raft/": true, "POST /v1/forward/batch": true,
		"POST /v1/agent/register": true, "GET /v1/agent/work": true, "POST /v1/agent/heartbeat": true,
		"POST /v1/agent/results": true, "POST /v1/agent/logs": true,
		"POST /v1/agent/actions/start": true, "POST /v1/agent/actions/finish": true,
		"POST /v1/envs": true, "GET /v1/envs": true, "GET /v1/envs/{env}": true, "DELETE /v1/envs/{env}": true,
		"POST /v1/tokens": true, "GET /v1/tokens": true, "DELETE /v1/tokens/{token}": true,
	}
)

// requestsOf turns a pattern into the requests that ask it: its method
// (GET, POST and DELETE when it names none) and a path with every
// wildcard filled.
func requestsOf(pattern string) (methods []string, path string) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		path, method = pattern, ""
	}
	r := strings.NewReplacer("{service}", "db", "{n}", "0", "{unit...}", "db/0", "{name}", "m1",
		"{hash}", strings.Repeat("a", 64), "{id}", "1", "{env}", "dev", "{token}", "ci")
	path = r.Replace(path)
	if strings.HasSuffix(path, "/") && path != "/ui/" {
		path += "apply"
	}
	if method == "" {
		return []string{"GET", "POST", "DELETE"}, path
	}
	return []string{method}, path
}

// status asks one request and returns its status code alone: a route
// that streams answers its code before its body.
func status(t *testing.T, method, url, token string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctxT(t), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestEnvTokensOnEveryRoute asks every registered route with a token of
// another environment (operator and reader), and with the default
// environment's reader and operator tokens: another environment's token
// is refused everything, the default environment's reach its routes
// alone, and a reader never writes or reveals.
func TestEnvTokensOnEveryRoute(t *testing.T) {
	n := startNodeOf(t, "n1", true, nil)
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	for _, name := range []string{"dev", "qa"} {
		if _, err := op.AddEnv(ctxT(t), api.NewEnv{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	tokens := map[string]string{}
	for _, tc := range []api.NewEnvToken{
		{Env: "dev", Role: "operator", Name: "dev-op"}, {Env: "dev", Role: "reader", Name: "dev-read"},
		{Role: "operator", Name: "ci"}, {Role: "reader", Name: "dash"},
	} {
		got, err := op.CreateToken(ctxT(t), tc)
		if err != nil || got.Token == "" || len(got.ID) != 16 {
			t.Fatalf("create token %+v: %+v, %v", tc, got, err)
		}
		tokens[tc.Name] = got.Token
	}
	patterns := api.Patterns(n.api)
	if len(patterns) < 40 {
		t.Fatalf("only %d patterns registered: %v", len(patterns), patterns)
	}
	asked := 0
	for _, p := range patterns {
		if publicPatterns[p] {
			continue
		}
		if pre := prefixOf(p); pre != "" {
			method, _, _ := strings.Cut(p, " ")
			if base := method + " /v1/" + strings.TrimPrefix(p, pre); !envPatterns[base] {
				t.Errorf("prefixed route %q prefixes %q, which is no environment route of this test", p, base)
				continue
			}
			prefixedRoute(t, n.addr, p, tokens)
			asked++
			continue
		}
		if !envPatterns[p] && !clusterPatterns[p] {
			t.Errorf("route %q is neither the default environment's nor the cluster's in this test: place it (and in engine/api/scope.go if an environment's token is to reach it)", p)
			continue
		}
		methods, path := requestsOf(p)
		for _, m := range methods {
			write := m != "GET" && m != "HEAD"
			for _, who := range []string{"dev-op", "dev-read"} {
				if code := status(t, m, n.addr+path, tokens[who]); code != http.StatusForbidden {
					t.Errorf("%s %s (%s) with dev's token %s: %d, want 403", m, path, p, who, code)
				}
			}
			code := status(t, m, n.addr+path, tokens["dash"])
			switch {
			case clusterPatterns[p] || write:
				if code != http.StatusForbidden {
					t.Errorf("%s %s (%s) with the default environment's reader: %d, want 403", m, path, p, code)
				}
			case code == http.StatusForbidden || code == http.StatusUnauthorized:
				t.Errorf("%s %s (%s) with the default environment's reader: %d, want it read", m, path, p, code)
			}
			if m == "GET" && envPatterns[p] {
				if code := status(t, m, n.addr+path+"?reveal=1", tokens["dash"]); code != http.StatusForbidden {
					t.Errorf("%s %s?reveal=1 with the default environment's reader: %d, want 403", m, path, code)
				}
			}
			code = status(t, m, n.addr+path, tokens["ci"])
			if clusterPatterns[p] != (code == http.StatusForbidden) {
				t.Errorf("%s %s (%s) with the default environment's operator: %d; 403 only on the cluster's routes", m, path, p, code)
			}
		}
	}

	if asked != len(envPatterns) {
		t.Errorf("%d prefixed routes asked; want one per environment route (%d)", asked, len(envPatterns))
	}

	// Refusals say why.
	dev := api.NewClient([]string{n.addr}, tokens["dev-op"], nil)
	if _, err := dev.Status(ctxT(t), false, 0, 0); !errors.Is(err, api.ErrForbidden) || !strings.Contains(err.Error(), "-e/--env dev") {
		t.Errorf("dev's operator reading the default environment's status: %v", err)
	}
	ci := api.NewClient([]string{n.addr}, tokens["ci"], nil)
	if _, err := ci.Envs(ctxT(t)); !errors.Is(err, api.ErrForbidden) || !strings.Contains(err.Error(), "use the cluster's operator token") {
		t.Errorf("the default environment's operator listing environments: %v", err)
	}
	dash := api.NewClient([]string{n.addr}, tokens["dash"], nil)
	if _, err := dash.Status(ctxT(t), false, 0, 0); err != nil {
		t.Errorf("the default environment's reader reading its status: %v", err)
	}
	if _, err := dash.Enqueue(ctxT(t), &api.Enqueue{Unit: "db/0", Exec: "true"}); !errors.Is(err, api.ErrForbidden) || !strings.Contains(err.Error(), "a reader token only reads") {
		t.Errorf("the default environment's reader running exec: %v", err)
	}

	// Revoked by name or id, a token opens nothing; removing dev revokes
	// its tokens.
	list, err := op.Tokens(ctxT(t), "", true)
	if err != nil || len(list) != 4 {
		t.Fatalf("tokens: %+v, %v", list, err)
	}
	for _, tok := range list {
		if tok.Token != "" {
			t.Errorf("the token list shows token %s itself", tok.Name)
		}
	}
	if err := op.RevokeToken(ctxT(t), "", "dash"); err != nil {
		t.Fatal(err)
	}
	if _, err := dash.Status(ctxT(t), false, 0, 0); !errors.Is(err, api.ErrUnauthorized) {
		t.Errorf("revoked reader: %v, want 401", err)
	}
	for _, tok := range list {
		if tok.Name == "ci" {
			if err := op.RevokeToken(ctxT(t), "", tok.ID); err != nil {
				t.Fatalf("revoke ci by its id: %v", err)
			}
		}
	}
	if _, err := ci.Status(ctxT(t), false, 0, 0); !errors.Is(err, api.ErrUnauthorized) {
		t.Errorf("revoked operator: %v, want 401", err)
	}
	if err := op.RevokeToken(ctxT(t), "", "ci"); !errors.Is(err, api.ErrRefused) || !strings.Contains(err.Error(), "no token named") {
		t.Errorf("revoking ci twice: %v", err)
	}
	if err := op.RemoveEnv(ctxT(t), "dev"); err != nil {
		t.Fatal(err)
	}
	if _, err := dev.Status(ctxT(t), false, 0, 0); !errors.Is(err, api.ErrUnauthorized) {
		t.Errorf("a token of the removed dev: %v, want 401", err)
	}
}

// prefixOf is the environment prefix of a prefixed pattern, "" for
// another: "GET /v1/envs/{env}/status" -> "GET /v1/envs/{env}/", whose
// base is "GET /v1/" + the rest.
func prefixOf(p string) string {
	method, path, _ := strings.Cut(p, " ")
	if !strings.HasPrefix(path, "/v1/envs/{env}/") {
		return ""
	}
	return method + " /v1/envs/{env}/"
}

// prefixedRoute asks prefixed pattern p of dev and of qa: dev's operator
// reaches dev's, its reader reads them alone, neither reaches qa's, and
// the default environment's tokens reach neither. The cluster's operator
// reaches both, and an environment that does not exist is 404.
func prefixedRoute(t *testing.T, addr, p string, tokens map[string]string) {
	t.Helper()
	methods, path := requestsOf(p)
	qa := strings.Replace(path, "/v1/envs/dev/", "/v1/envs/qa/", 1)
	nope := strings.Replace(path, "/v1/envs/dev/", "/v1/envs/nope/", 1)
	for _, m := range methods {
		write := m != "GET" && m != "HEAD"
		if code := status(t, m, addr+path, tokens["dev-op"]); code == http.StatusForbidden || code == http.StatusUnauthorized {
			t.Errorf("%s %s (%s) with dev's operator: %d, want it served", m, path, p, code)
		}
		code := status(t, m, addr+path, tokens["dev-read"])
		if write != (code == http.StatusForbidden) {
			t.Errorf("%s %s (%s) with dev's reader: %d; 403 only on writes", m, path, p, code)
		}
		if m == "GET" {
			if code := status(t, m, addr+path+"?reveal=1", tokens["dev-read"]); code != http.StatusForbidden {
				t.Errorf("%s %s?reveal=1 with dev's reader: %d, want 403", m, path, code)
			}
		}
		for _, who := range []string{"dev-op", "dev-read"} {
			if code := status(t, m, addr+qa, tokens[who]); code != http.StatusForbidden {
				t.Errorf("%s %s (%s) with dev's token %s: %d, want 403", m, qa, p, who, code)
			}
		}
		for _, who := range []string{"ci", "dash"} {
			if code := status(t, m, addr+path, tokens[who]); code != http.StatusForbidden {
				t.Errorf("%s %s (%s) with the default environment's token %s: %d, want 403", m, path, p, who, code)
			}
		}
		if code := status(t, m, addr+qa, operatorToken); code == http.StatusForbidden || code == http.StatusUnauthorized {
			t.Errorf("%s %s (%s) with the cluster's operator: %d, want it served", m, qa, p, code)
		}
		if code := status(t, m, addr+nope, operatorToken); code != http.StatusNotFound {
			t.Errorf("%s %s (%s): %d, want 404: there is no environment nope", m, nope, p, code)
		}
	}
}

// TestEnvManagement: environments are added, listed, shown and removed by
// the cluster's operator; bad names and sizes are refused before any
// proposal, and so are a taken name and the default environment's
// removal.
func TestEnvManagement(t *testing.T) {
	n := startNode(t, "n1")
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	added, err := op.AddEnv(ctxT(t), api.NewEnv{Name: "dev", MaxUnits: 10, MaxServices: 2})
	if err != nil || added.Name != "dev" || len(added.UUID) != 36 || added.MaxUnits != 10 || added.Created == 0 {
		t.Fatalf("add dev: %+v, %v", added, err)
	}
	before := n.store.Index()
	for _, tc := range []struct {
		req  api.NewEnv
		want error
		msg  string
	}{
		{api.NewEnv{Name: "Dev"}, api.ErrBadRequest, "is invalid"},
		{api.NewEnv{Name: strings.Repeat("a", 64)}, api.ErrBadRequest, "environment name"},
		{api.NewEnv{Name: "qa", MaxUnits: -1}, api.ErrBadRequest, "max_units -1"},
		{api.NewEnv{Name: "dev"}, api.ErrRefused, "environment dev exists"},
	} {
		if _, err := op.AddEnv(ctxT(t), tc.req); !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("add %+v: %v, want %v saying %q", tc.req, err, tc.want, tc.msg)
		}
	}
	for _, tc := range []struct {
		req  api.NewEnvToken
		want error
		msg  string
	}{
		{api.NewEnvToken{Env: "dev", Role: "admin", Name: "x"}, api.ErrBadRequest, `role "admin"`},
		{api.NewEnvToken{Env: "dev", Role: "reader", Name: "Bad Name"}, api.ErrBadRequest, "is invalid"},
		{api.NewEnvToken{Env: "nope", Role: "reader", Name: "x"}, api.ErrNotFound, "fixpoint env add nope"},
	} {
		if _, err := op.CreateToken(ctxT(t), tc.req); !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("create token %+v: %v, want %v saying %q", tc.req, err, tc.want, tc.msg)
		}
	}
	if err := op.RevokeToken(ctxT(t), "dev", "nope"); !errors.Is(err, api.ErrRefused) || !strings.Contains(err.Error(), `environment "dev" has no token named "nope"`) {
		t.Errorf("revoke a token dev does not have: %v", err)
	}
	if got := n.store.Index(); got != before {
		t.Errorf("refused adds and tokens moved the log from %d to %d", before, got)
	}
	if tok, err := op.CreateToken(ctxT(t), api.NewEnvToken{Env: "dev", Role: "reader"}); err != nil || !strings.HasPrefix(tok.Name, "reader-") {
		t.Errorf("a token without a name: %+v, %v", tok, err)
	}
	envs, err := op.Envs(ctxT(t))
	if err != nil || len(envs) != 2 || !envs[0].Default || envs[1].Name != "dev" || envs[1].UUID != added.UUID {
		t.Fatalf("envs: %+v, %v", envs, err)
	}
	if _, err := op.ShowEnv(ctxT(t), "nope"); !errors.Is(err, api.ErrNotFound) || !strings.Contains(err.Error(), "fixpoint env add nope") {
		t.Errorf("show nope: %v", err)
	}
	if err := op.RemoveEnv(ctxT(t), "nope"); !errors.Is(err, api.ErrNotFound) || !strings.Contains(err.Error(), "fixpoint env add nope") {
		t.Errorf("remove nope: %v", err)
	}
	// A dev that runs something is deployed empty; its units, on no
	// machine, have no hooks to run, and it goes.
	d := uploadedDeploy(t, n)(2)
	d.Env.Name = "dev"
	if _, err := n.store.Env("dev").Apply(ctxT(t), &model.Command{Op: model.OpDeploy, Deploy: d}); err != nil {
		t.Fatalf("deploy to dev: %v", err)
	}
	if info, err := op.ShowEnv(ctxT(t), "dev"); err != nil || info.Units != 2 || info.Services != 1 {
		t.Errorf("show dev: %+v, %v", info, err)
	}
	if err := op.RemoveEnv(ctxT(t), "dev"); err != nil {
		t.Fatalf("remove dev: %v", err)
	}
	if envs, err := op.Envs(ctxT(t)); err != nil || len(envs) != 1 {
		t.Errorf("envs after removing dev: %+v, %v", envs, err)
	}
}

// TestEnvTokenAtAFollower: a token made through the leader opens its
// environment's reads at a follower right after (the follower catches up
// before it refuses a token it does not know), the follower refuses it
// the cluster's routes as the leader does, and environments made through
// the follower are the leader's.
func TestEnvTokenAtAFollower(t *testing.T) {
	leader, follower := cluster(t)
	op := api.NewClient([]string{leader.addr}, operatorToken, nil)
	for i := 0; i < 3; i++ {
		tok, err := op.CreateToken(ctxT(t), api.NewEnvToken{Role: "reader", Name: fmt.Sprintf("r%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		at := api.NewClient([]string{follower.addr}, tok.Token, nil)
		if _, err := at.State(ctxT(t), true); err != nil {
			t.Fatalf("reader %d at the follower right after its creation: %v", i, err)
		}
		if _, err := at.Envs(ctxT(t)); !errors.Is(err, api.ErrForbidden) {
			t.Errorf("reader %d listing environments at the follower: %v, want 403", i, err)
		}
	}
	viaFollower := api.NewClient([]string{follower.addr}, operatorToken, nil)
	if _, err := viaFollower.AddEnv(ctxT(t), api.NewEnv{Name: "dev"}); err != nil {
		t.Fatalf("add dev through the follower: %v", err)
	}
	if envs, err := op.Envs(ctxT(t)); err != nil || len(envs) != 2 || envs[1].Name != "dev" {
		t.Errorf("the leader's environments: %+v, %v", envs, err)
	}
}
