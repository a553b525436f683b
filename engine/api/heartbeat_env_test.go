package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// TestHeartbeatJudgesEachUnitInItsEnvironment: the heartbeat's running
// and kept units are unit keys, a bare name the default environment's;
// each is judged in its own environment (dev's db/0 is placed on m1, a
// db/0 of an environment that does not exist is not), environments asked
// about are answered gone only when the cluster no longer holds them,
// and a key that names no unit changes nothing.
func TestHeartbeatJudgesEachUnitInItsEnvironment(t *testing.T) {
	n := startNodeOf(t, "n1", true, nil)
	if _, err := n.store.Apply(ctxT(t), &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m1", Address: "10.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.store.Apply(ctxT(t), dbIn("")); err != nil {
		t.Fatal(err)
	}
	if _, err := n.store.AddEnv(ctxT(t), "dev", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := n.store.Env("dev").Apply(ctxT(t), dbIn("dev")); err != nil {
		t.Fatal(err)
	}
	beat := func(hb api.Heartbeat) (int, api.HeartbeatReply) {
		t.Helper()
		body, _ := json.Marshal(hb)
		code, _, b := call(t, http.MethodPost, n.addr+"/v1/agent/heartbeat?machine=m1", operatorToken, body)
		var reply api.HeartbeatReply
		if code == http.StatusOK {
			if err := json.Unmarshal(b, &reply); err != nil {
				t.Fatalf("heartbeat answer %s: %v", b, err)
			}
		}
		return code, reply
	}
	code, reply := beat(api.Heartbeat{
		Running: []string{"db/0", "dev:db/0", "qa:db/0", "dev:db/7"},
		Kept:    []string{"db/0", "dev:db/0", "qa:db/0", "db/9"},
		Envs:    []string{"dev", "qa"},
	})
	if code != http.StatusOK {
		t.Fatalf("heartbeat answered %d", code)
	}
	if want := []string{"qa:db/0", "dev:db/7"}; !slices.Equal(reply.Gone, want) {
		t.Errorf("gone %v; want %v", reply.Gone, want)
	}
	if want := []string{"qa:db/0", "db/9"}; !slices.Equal(reply.Released, want) {
		t.Errorf("released %v; want %v", reply.Released, want)
	}
	if want := []string{"qa"}; !slices.Equal(reply.GoneEnvs, want) {
		t.Errorf("gone environments %v; want %v", reply.GoneEnvs, want)
	}
	// An agent built before environments names the default's units bare.
	if code, reply := beat(api.Heartbeat{Running: []string{"db/0"}}); code != http.StatusOK || len(reply.Gone) != 0 {
		t.Errorf("an old agent's heartbeat: %d %+v", code, reply)
	}
	for _, bad := range []api.Heartbeat{
		{Kept: []string{"Dev:db/0"}},
		{Kept: []string{"dev:db"}},
		{Envs: []string{"../x"}},
	} {
		if code, _ := beat(bad); code != http.StatusBadRequest {
			t.Errorf("heartbeat %+v answered %d; want 400", bad, code)
		}
	}
}

// TestAgentOperationsGoToTheirEnvironment: an exec queued in dev is
// handed to m1's agent named with dev; its start and finish, naming dev,
// land in dev's operation (the default environment's db/0 has none),
// and a start naming an environment nobody serves is refused.
func TestAgentOperationsGoToTheirEnvironment(t *testing.T) {
	n := startNodeOf(t, "n1", true, nil)
	if _, err := n.store.Apply(ctxT(t), &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m1", Address: "10.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.store.Apply(ctxT(t), dbIn("")); err != nil {
		t.Fatal(err)
	}
	if _, err := n.store.AddEnv(ctxT(t), "dev", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := n.store.Env("dev").Apply(ctxT(t), dbIn("dev")); err != nil {
		t.Fatal(err)
	}
	resp, err := n.store.Env("dev").Apply(ctxT(t), &model.Command{Op: model.OpEnqueue, Enqueue: &model.EnqueueAction{Unit: "db/0", Name: model.ExecName, Exec: "true"}})
	if err != nil || resp.Action == 0 {
		t.Fatalf("enqueue in dev: %+v, %v", resp, err)
	}
	id := resp.Action
	var act wire.Work
	rafttest.Eventually(t, time.Minute, "dev's exec handed out", func() error {
		_, work := poll(t, n, "&envs=1")
		for _, w := range work {
			if w.Action != nil && w.Action.ID == id {
				act = w
				return nil
			}
		}
		return fmt.Errorf("handed %+v", work)
	})
	if act.Env != "dev" {
		t.Fatalf("the exec came with environment %q; want dev", act.Env)
	}
	post := func(path string, v any) int {
		t.Helper()
		body, _ := json.Marshal(v)
		code, _, _ := call(t, http.MethodPost, n.addr+path+"?machine=m1", operatorToken, body)
		return code
	}
	if code := post("/v1/agent/actions/start", api.StartReq{ID: id, Env: "qa"}); code != http.StatusConflict {
		t.Errorf("a start naming qa answered %d; want 409", code)
	}
	if code := post("/v1/agent/actions/start", api.StartReq{ID: id, Env: "dev"}); code != http.StatusOK {
		t.Fatalf("dev's start answered %d", code)
	}
	if code := post("/v1/agent/actions/finish", wire.ActionReport{ID: id, Unit: "db/0", Env: "dev", Results: map[string]any{"return-code": 0.0}}); code != http.StatusOK {
		t.Fatalf("dev's finish answered %d", code)
	}
	status := func(env string) string {
		out := ""
		_ = n.store.Env(env).View(func(st *model.State) error {
			if a := st.Actions[id]; a != nil {
				out = a.Status
			}
			return nil
		})
		return out
	}
	if got := status("dev"); got != model.ActionCompleted {
		t.Errorf("dev's operation %d is %q; want completed", id, got)
	}
	if got := status(""); got != "" {
		t.Errorf("the default environment has an operation %d: %q", id, got)
	}
}
