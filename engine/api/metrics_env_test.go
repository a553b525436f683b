package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// scrape returns the node's /metrics text.
func scrape(t *testing.T, n *testNode) string {
	t.Helper()
	code, _, body := call(t, http.MethodGet, n.addr+"/metrics", "", nil)
	if code != http.StatusOK {
		t.Fatalf("metrics: %d %s", code, body)
	}
	return string(body)
}

// reportDev hands dev's work for m1 to an agent that keeps environments
// apart and reports it done.
func reportDev(t *testing.T, n *testNode, what string) {
	t.Helper()
	if code, e, b := call(t, http.MethodPost, n.addr+"/v1/agent/heartbeat?machine=m1", operatorToken, nil); code != http.StatusOK {
		t.Fatalf("heartbeat answered %d %v %s", code, e, b)
	}
	var got []wire.Work
	rafttest.Eventually(t, time.Minute, what, func() error {
		code, work := poll(t, n, "&envs=1")
		if code != http.StatusOK || len(work) == 0 || work[0].Env != "dev" {
			return fmt.Errorf("answered %d with %+v", code, work)
		}
		got = work
		return nil
	})
	var reports []wire.Report
	for _, w := range got {
		reports = append(reports, wire.Report{Unit: w.Unit, Hash: w.Hash, Env: w.Env, Duration: time.Second, Output: []byte(`{}`)})
	}
	body, _ := json.Marshal(reports)
	if code, e, b := call(t, http.MethodPost, n.addr+"/v1/agent/results?machine=m1", operatorToken, body); code != http.StatusOK {
		t.Fatalf("results answered %d %v %s", code, e, b)
	}
}

// TestMetricsPerEnvironment: the default environment's series read as
// a v0.3.0 server's do (no env label); another environment's
// carry its name in env, its hook runs included; and once it is removed
// its series are gone.
func TestMetricsPerEnvironment(t *testing.T) {
	n := startNodeOf(t, "n1", true, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := n.store.AddEnv(ctx, "dev", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := n.store.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m1", Address: "10.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.store.Env("dev").Apply(ctx, dbIn("dev")); err != nil {
		t.Fatal(err)
	}
	reportDev(t, n, "dev's db/0 handed out")
	rafttest.Eventually(t, time.Minute, "dev's series", func() error {
		m := scrape(t, n)
		for _, want := range []string{
			`fixpoint_units{phase="settled"} 0`,
			`fixpoint_converged{env="dev"} 1`,
			`fixpoint_reconciles_total{env="dev",outcome="ok",service="db"} 1`,
			`fixpoint_hook_duration_seconds_count{env="dev",service="db"}`,
		} {
			if !strings.Contains(m, want) {
				return fmt.Errorf("no %s in\n%s", want, grepLines(m, "fixpoint_units", "fixpoint_reconciles", "fixpoint_converged"))
			}
		}
		if !regexp.MustCompile(`(?m)^fixpoint_units\{env="dev",phase="[a-z]+"\} 1$`).MatchString(m) {
			return fmt.Errorf("dev's db/0 is in no phase:\n%s", grepLines(m, "fixpoint_units"))
		}
		if strings.Contains(m, `env=""`) {
			return fmt.Errorf("the default environment's series carry an empty env label")
		}
		return nil
	})
	empty := &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: model.Environment{APIVersion: model.APIVersion, Name: "dev"}}}
	if _, err := n.store.Env("dev").Apply(ctx, empty); err != nil {
		t.Fatal(err)
	}
	reportDev(t, n, "dev's db/0 dying run handed out")
	rafttest.Eventually(t, time.Minute, "dev emptied and removed", func() error {
		return n.store.RemoveEnv(ctx, "dev")
	})
	rafttest.Eventually(t, time.Minute, "dev's series gone", func() error {
		if m := scrape(t, n); strings.Contains(m, `env="dev"`) {
			return fmt.Errorf("dev's series remain:\n%s", grepLines(m, `env="dev"`))
		}
		return nil
	})
}

// grepLines are the lines of text holding any of subs.
func grepLines(text string, subs ...string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		for _, s := range subs {
			if strings.Contains(l, s) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
