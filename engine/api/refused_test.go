package api_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// TestRefusedOperationCallsDoNotGrowTheLog: an agent starting or
// finishing an operation of a unit not on its machine, and credentials
// posted to /v1/raft/apply that differ from those set, are refused with
// 409 and the Raft log does not move, however often they are sent.
func TestRefusedOperationCallsDoNotGrowTheLog(t *testing.T) {
	n := startNode(t, "n1")
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	agents := map[string]*api.Client{}
	for _, m := range []string{"m1", "m2"} {
		agents[m] = api.NewClient([]string{n.addr}, joinToken, nil)
		if err := agents[m].Register(ctxT(t), m, "10.0.0.1"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := op.Deploy(ctxT(t), uploadedDeploy(t, n)(1)); err != nil {
		t.Fatal(err)
	}
	var on string
	_ = n.store.View(func(st *model.State) error {
		on = st.Units["db/0"].Machine
		return nil
	})
	other := map[string]string{"m1": "m2", "m2": "m1"}[on]
	if other == "" {
		t.Fatalf("db/0 is on machine %q; want m1 or m2", on)
	}
	id, err := op.Enqueue(ctxT(t), &api.Enqueue{Unit: "db/0", Exec: "true"})
	if err != nil {
		t.Fatal(err)
	}
	report := &wire.ActionReport{ID: id, Unit: "db/0", Message: strings.Repeat("x", 8<<10)}

	before := lastIndex(t, n)
	for range 5 {
		if err := agents[other].StartAction(ctxT(t), other, "", id); !errors.Is(err, api.ErrRefused) || !strings.Contains(err.Error(), "not on machine "+other) {
			t.Fatalf("machine %s starts db/0's operation: %v; want 409 saying db/0 is not on it", other, err)
		}
		if err := agents[other].FinishAction(ctxT(t), other, report); !errors.Is(err, api.ErrRefused) || !strings.Contains(err.Error(), "not running on "+other) {
			t.Fatalf("machine %s finishes db/0's pending operation: %v; want 409", other, err)
		}
	}
	if after := lastIndex(t, n); after != before {
		t.Fatalf("refused starts and finishes grew the Raft log from %d to %d", before, after)
	}

	if err := agents[on].StartAction(ctxT(t), on, "", id); err != nil {
		t.Fatalf("machine %s starts its unit's operation: %v", on, err)
	}
	before = lastIndex(t, n)
	for range 5 {
		if err := agents[other].FinishAction(ctxT(t), other, report); !errors.Is(err, api.ErrRefused) || !strings.Contains(err.Error(), "not running on "+other) {
			t.Fatalf("machine %s finishes the operation %s runs: %v; want 409", other, on, err)
		}
	}
	if after := lastIndex(t, n); after != before {
		t.Fatalf("refused finishes grew the Raft log from %d to %d", before, after)
	}

	// Other credentials, posted by an operator to /v1/raft/apply.
	auth, err := json.Marshal(&model.Command{Op: model.OpAuth, Auth: &model.Auth{Operator: api.HashToken("another"), Join: api.HashToken("another join")}})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		code, e, body := call(t, http.MethodPost, n.addr+"/v1/raft/apply", operatorToken, auth)
		if code != http.StatusConflict || !strings.Contains(string(body), "already set") {
			t.Fatalf("other credentials posted to /v1/raft/apply: %d %v %s; want 409", code, e, body)
		}
	}
	if after := lastIndex(t, n); after != before {
		t.Fatalf("refused credentials grew the Raft log from %d to %d", before, after)
	}
	if err := agents[on].FinishAction(ctxT(t), on, &wire.ActionReport{ID: id, Unit: "db/0"}); err != nil {
		t.Fatalf("machine %s finishes its unit's operation: %v", on, err)
	}
}
