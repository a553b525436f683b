package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// fleetStore adapts raftstore.Store to fleet.Cluster, as cmd/fixpoint does.
type fleetStore struct{ *raftstore.Store }

func (s fleetStore) Env(name string) engine.Store { return s.Store.Env(name) }

// dbIn deploys one unit of a tiny db charm to env ("" the default).
func dbIn(env string) *model.Command {
	meta := model.CharmMeta{Name: "db", Provides: map[string]model.Endpoint{"db": {Interface: "sql"}}}
	name := env
	if name == "" {
		name = "test"
	}
	return &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{
		Env:    model.Environment{APIVersion: "fixpoint/v1", Name: name, Services: map[string]model.ServiceSpec{"db": {Charm: "./db", CharmHash: "h1"}}},
		Charms: map[string]*model.Charm{"h1": {Hash: "h1", Meta: meta}},
	}}
}

// poll is GET /v1/agent/work for m1 with extra query, decoded.
func poll(t *testing.T, n *testNode, query string) (int, []wire.Work) {
	t.Helper()
	code, _, body := call(t, http.MethodGet, n.addr+"/v1/agent/work?machine=m1&wait=300ms"+query, operatorToken, nil)
	var work []wire.Work
	if code == http.StatusOK {
		if err := json.Unmarshal(body, &work); err != nil {
			t.Fatalf("work answer %s: %v", body, err)
		}
	}
	return code, work
}

// TestWorkPollGatesEnvironments: over HTTP, an agent's poll that does
// not say envs=1 (every agent built before environments) is handed the
// default environment's work alone; one that does is handed another
// environment's, named with it; a malformed envs= changes nothing.
func TestWorkPollGatesEnvironments(t *testing.T) {
	n := startNodeOf(t, "n1", true, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := n.store.AddEnv(ctx, "dev", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := n.store.Env("dev").Apply(ctx, dbIn("dev")); err != nil {
		t.Fatal(err)
	}
	if _, err := n.store.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m1", Address: "10.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	if code, _ := poll(t, n, "&envs=maybe"); code != http.StatusBadRequest {
		t.Errorf("envs=maybe answered %d; want 400", code)
	}
	if code, work := poll(t, n, ""); code != http.StatusOK || len(work) != 0 {
		t.Fatalf("a poll without envs=1 answered %d with %+v; want no work: dev's db/0 is not for it", code, work)
	}
	var got []wire.Work
	rafttest.Eventually(t, time.Minute, "dev's db/0 handed to an agent that keeps environments apart", func() error {
		code, work := poll(t, n, "&envs=1")
		if code != http.StatusOK || len(work) != 1 || work[0].Unit != "db/0" || work[0].Env != "dev" || work[0].EnvUUID == "" {
			return fmt.Errorf("answered %d with %+v", code, work)
		}
		got = work
		return nil
	})
	body, _ := json.Marshal([]wire.Report{{Unit: "db/0", Hash: got[0].Hash, Env: "dev", Output: []byte(`{}`)}})
	if code, e, b := call(t, http.MethodPost, n.addr+"/v1/agent/results?machine=m1", operatorToken, body); code != http.StatusOK {
		t.Fatalf("results answered %d %v %s", code, e, b)
	}
	if err := n.store.Env("dev").View(func(st *model.State) error {
		if u := st.Units["db/0"]; u == nil || u.Reconciles != 1 {
			return fmt.Errorf("dev's db/0: %+v; want one reconcile", u)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
