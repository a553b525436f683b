package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// runDB hands dev's db/0 (env's) to m1's agent, as an agent that keeps
// environments apart polls, reports its run, and returns the life its
// universe had.
func runDB(t *testing.T, n *testNode, env string) string {
	t.Helper()
	var w wire.Work
	rafttest.Eventually(t, time.Minute, env+"'s db/0 handed out", func() error {
		code, work := poll(t, n, "&envs=1")
		for _, got := range work {
			if got.Env == env && got.Unit == "db/0" {
				w = got
				return nil
			}
		}
		return fmt.Errorf("answered %d with %+v", code, work)
	})
	body, _ := json.Marshal([]wire.Report{{Unit: "db/0", Hash: w.Hash, Env: env, Output: []byte(`{}`)}})
	if code, e, b := call(t, http.MethodPost, n.addr+"/v1/agent/results?machine=m1", operatorToken, body); code != http.StatusOK {
		t.Fatalf("results answered %d %v %s", code, e, b)
	}
	return w.Universe.Life
}

// remove is DELETE /v1/envs/{env} with query, its code and what remains.
func remove(t *testing.T, n *testNode, env, query string) (int, api.EnvRemoval) {
	t.Helper()
	code, e, body := call(t, http.MethodDelete, n.addr+"/v1/envs/"+env+query, operatorToken, nil)
	var left api.EnvRemoval
	if code == http.StatusAccepted {
		if err := json.Unmarshal(body, &left); err != nil {
			t.Fatalf("answer %s: %v", body, err)
		}
	} else if code != http.StatusNoContent {
		t.Fatalf("DELETE /v1/envs/%s%s answered %d %v", env, query, code, e)
	}
	return code, left
}

// TestEnvRemoveRunsDyingHooks: removing an environment whose unit runs
// on an agent deploys it empty and answers 202 with the unit dying until
// the agent reports its dying run; then the environment goes. Another
// environment whose unit is on a lost machine waits for that agent
// unless forced, and --force drops it at once.
func TestEnvRemoveRunsDyingHooks(t *testing.T) {
	n := startNodeOf(t, "n1", true, nil)
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	if _, err := n.store.Apply(ctxT(t), &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m1", Address: "10.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{"dev", "qa"} {
		if _, err := op.AddEnv(ctxT(t), api.NewEnv{Name: env}); err != nil {
			t.Fatal(err)
		}
		if _, err := n.store.Env(env).Apply(ctxT(t), dbIn(env)); err != nil {
			t.Fatal(err)
		}
		if life := runDB(t, n, env); life != string(model.Alive) {
			t.Fatalf("%s's db/0 first ran %s", env, life)
		}
	}

	for _, q := range []string{"?force=maybe", "?wait=soon", "?wait=-1s"} {
		if code, _, _ := call(t, http.MethodDelete, n.addr+"/v1/envs/dev"+q, operatorToken, nil); code != http.StatusBadRequest {
			t.Errorf("DELETE /v1/envs/dev%s answered %d; want 400", q, code)
		}
	}
	code, left := remove(t, n, "dev", "?wait=0s")
	if code != http.StatusAccepted || left.Units != 1 || len(left.Dying) != 1 || left.Dying[0] != "db/0" || len(left.Lost) != 0 {
		t.Fatalf("removing dev answered %d %+v; want 202 with db/0 dying", code, left)
	}
	if life := runDB(t, n, "dev"); life != string(model.Dying) {
		t.Fatalf("dev's db/0 ran %s after the removal began; want its dying run", life)
	}
	if err := op.RemoveEnv(ctxT(t), "dev"); err != nil {
		t.Fatalf("remove dev: %v", err)
	}
	if _, err := op.ShowEnv(ctxT(t), "dev"); err == nil {
		t.Fatal("dev is still there")
	}

	// qa's db/0 is on m1, now lost: its hooks cannot run.
	if _, err := n.store.Apply(ctxT(t), &model.Command{Op: model.OpLiveness, Liveness: &model.SetLiveness{Lost: map[string]bool{"m1": true}}}); err != nil {
		t.Fatal(err)
	}
	code, left = remove(t, n, "qa", "?wait=0s")
	if code != http.StatusAccepted || left.Units != 1 || len(left.Lost) != 1 {
		t.Fatalf("removing qa answered %d %+v; want 202 with db/0 on a lost machine", code, left)
	}
	if code, _ := remove(t, n, "qa", "?force=1&wait=0s"); code != http.StatusNoContent {
		t.Fatalf("forced removal of qa answered %d", code)
	}
	envs, err := op.Envs(ctxT(t))
	if err != nil || len(envs) != 1 {
		t.Fatalf("envs after the removals: %+v, %v", envs, err)
	}
}
