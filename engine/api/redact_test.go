package api_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// Secrets of the fixture: db's secret option, the password db/0 hands
// out, and the token its leader keeps.
const (
	secretSeed     = "seed-value-9f1c"
	secretPassword = "pw-0123456789abcdef"
	secretToken    = "tok-5e5e5e5e5e"
)

// deploySecrets registers m1 through an agent, deploys db (a secret
// option) related to web on it, and reports a run of db/0 that hands out
// a password, keeps a token in its leader data and prints the password
// on stderr. It returns the agent's client and its credential.
func deploySecrets(t *testing.T, n *testNode) (*api.Client, string) {
	t.Helper()
	ctx := ctxT(t)
	agent := api.NewClient([]string{n.addr}, joinToken, nil)
	var cred string
	agent.UseCredential("", func(tok string) error { cred = tok; return nil })
	if err := agent.Register(ctx, "m1", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	one := 1
	env := model.Environment{APIVersion: model.APIVersion, Name: "secrets", Services: map[string]model.ServiceSpec{
		"db":  {CharmHash: "h-db", Units: &one, Placement: []string{"m1"}, Config: map[string]any{"seed": secretSeed}},
		"web": {CharmHash: "h-web", Units: &one, Placement: []string{"m1"}},
	}, Relations: map[string][]string{"web-db": {"web:db", "db:db"}}}
	charms := map[string]*model.Charm{
		"h-db": {Hash: "h-db", Meta: model.CharmMeta{Name: "db",
			Provides: map[string]model.Endpoint{"db": {Interface: "pg"}},
			Options: map[string]model.Option{
				"seed": {Type: model.SecretType, Description: "password seed"},
				"port": {Type: "int", Default: 5432},
			}}},
		"h-web": {Hash: "h-web", Meta: model.CharmMeta{Name: "web", Requires: map[string]model.Endpoint{"db": {Interface: "pg"}}}},
	}
	if _, err := n.store.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		work, err := agent.Claim(ctx, "m1", 10, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var reports []wire.Report
		done := false
		for _, w := range work {
			if w.Unit != "db/0" || len(w.Universe.Relations) == 0 {
				reports = append(reports, wire.Report{Unit: w.Unit, Hash: w.Hash, Output: json.RawMessage(`{}`)})
				continue
			}
			ident := w.Universe.Relations[0].Ident
			res := charmapi.NewResult().SetLocal(ident, map[string]string{"host": "10.0.0.1", "password": secretPassword})
			res.LeaderData = map[string]string{"admin-token": secretToken, "mode": "ha"}
			out, _ := json.Marshal(res)
			reports = append(reports, wire.Report{Unit: w.Unit, Hash: w.Hash, Output: out, Stderr: "granting web with " + secretPassword})
			done = true
		}
		if len(reports) > 0 {
			if err := agent.Report(ctx, "m1", reports); err != nil {
				t.Fatal(err)
			}
		}
		if done {
			return agent, cred
		}
	}
	t.Fatal("db/0 was never handed out with its relation")
	return nil, ""
}

// TestSecretsAreRedactedInEveryAnswer: the state, universes, units,
// config, logs and explanations carry no secret value, only its
// redaction, unless the operator asks with ?reveal=1; anyone else asking
// to reveal is refused.
func TestSecretsAreRedactedInEveryAnswer(t *testing.T) {
	n := startNode(t, "n1")
	agent, cred := deploySecrets(t, n)
	secrets := []string{secretSeed, secretPassword, secretToken}
	paths := map[string][]string{
		"/v1/state":              secrets,
		"/v1/universe/db/0":      secrets,
		"/v1/universe/web/0":     {secretPassword},
		"/v1/units/db/0":         {secretPassword},
		"/v1/services/db/config": {secretSeed},
		"/v1/logs":               {secretPassword, secretToken},
		"/v1/logs?unit=db/0":     {secretPassword, secretToken},
	}
	// web/0's universe has db/0's password once the result is applied.
	rafttest.Eventually(t, time.Minute, "web/0 sees db/0's password", func() error {
		_, _, body := call(t, "GET", n.addr+"/v1/universe/web/0?reveal=1", operatorToken, nil)
		if !strings.Contains(string(body), secretPassword) {
			return errors.New("not yet")
		}
		return nil
	})
	for path, want := range paths {
		code, e, body := call(t, "GET", n.addr+path, operatorToken, nil)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %v", path, code, e)
		}
		for _, s := range secrets {
			if strings.Contains(string(body), s) {
				t.Errorf("GET %s holds the secret %s", path, s)
			}
		}
		for _, s := range want {
			if !strings.Contains(string(body), model.Redact(s)) {
				t.Errorf("GET %s lacks the redaction of %s:\n%s", path, s, body)
			}
		}
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		code, e, body = call(t, "GET", n.addr+path+sep+"reveal=1", operatorToken, nil)
		if code != http.StatusOK {
			t.Fatalf("GET %s revealed: %d %v", path, code, e)
		}
		for _, s := range want {
			if !strings.Contains(string(body), s) {
				t.Errorf("GET %s?reveal=1 lacks %s", path, s)
			}
		}
	}
	// The stderr line is kept, with the password taken out.
	_, _, body := call(t, "GET", n.addr+"/v1/logs?unit=db/0", operatorToken, nil)
	if !strings.Contains(string(body), "granting web with "+model.Redact(secretPassword)) {
		t.Errorf("logs lack the scrubbed stderr: %s", body)
	}
	// Plain values stay plain.
	if !strings.Contains(string(body), `"leader_data.mode"`) || !strings.Contains(string(body), `"\"ha\""`) {
		t.Errorf("logs lost a plain change: %s", body)
	}

	// Only the operator may reveal: an agent's credential and the join
	// token get a 403 that says so.
	for who, tok := range map[string]string{"join token": joinToken, "agent": cred} {
		for _, path := range []string{"/v1/logs?reveal=1", "/v1/universe/db/0?reveal=1", "/v1/agent/work?machine=m1&wait=1ms&reveal=1"} {
			code, e, body := call(t, "GET", n.addr+path, tok, nil)
			if code != http.StatusForbidden || !errors.Is(e, api.ErrForbidden) || !strings.Contains(e.Message, "only the operator credential may") {
				t.Errorf("%s GET %s: %d %v, want 403 saying only the operator may reveal", who, path, code, e)
			}
			for _, s := range secrets {
				if strings.Contains(string(body), s) {
					t.Errorf("%s GET %s got the secret %s", who, path, s)
				}
			}
		}
	}
	if code, e, _ := call(t, "GET", n.addr+"/v1/logs?reveal=maybe", operatorToken, nil); code != http.StatusBadRequest {
		t.Errorf("reveal=maybe: %d %v, want 400", code, e)
	}

	// The hooks still get the values: db/0's universe as handed out.
	work, err := agent.Claim(ctxT(t), "m1", 10, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range work {
		if w.Unit == "db/0" && w.Universe.Config["seed"] != secretSeed {
			t.Errorf("db/0's hook is given seed %v, want the value", w.Universe.Config["seed"])
		}
	}
}

// TestClientRevealAsksForValues: the client's reveal mode sends
// ?reveal=1 with the reads that carry secrets.
func TestClientRevealAsksForValues(t *testing.T) {
	n := startNode(t, "n1")
	deploySecrets(t, n)
	ctx := ctxT(t)
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	sc, err := op.ServiceConfig(ctx, "db")
	if err != nil {
		t.Fatal(err)
	}
	if sc.Config["seed"].Value != model.Redact(secretSeed) {
		t.Errorf("seed = %v, want it redacted", sc.Config["seed"].Value)
	}
	op.SetReveal(true)
	if sc, err = op.ServiceConfig(ctx, "db"); err != nil || sc.Config["seed"].Value != secretSeed {
		t.Errorf("revealed seed = %v, %v", sc.Config["seed"].Value, err)
	}
	st, err := op.State(ctx, false)
	if err != nil || st.Services["db"].Config["seed"] != secretSeed {
		t.Errorf("revealed state's seed = %v, %v", st.Services["db"].Config["seed"], err)
	}
}
