package raftstore

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
	"github.com/fixpoint/fixpoint/raftstore/forward"
)

// A request id that reaches the leader forwarded by another node is bound
// to its command as one proposed on the leader is: the same id with
// another command is refused, not answered as a retry of the first.
func TestForwardedRequestIDIsBoundToItsCommand(t *testing.T) {
	n1 := newNode(t, testLogger(t), "n1")
	n1.start(true, nil)
	settled(t, n1)
	ctx := ctxT(t, time.Minute)
	c := forward.NewClient(&http.Client{Transport: forward.NewTransport(nil)}, "n2")
	send := func(machine string) error {
		// As an older node forwards it: the id without its digest.
		body, err := json.Marshal(&model.Command{Op: model.OpMachine, RequestID: "req-1",
			Machine: &model.RegisterMachine{Name: machine, Address: "10.0.0.1"}})
		if err != nil {
			t.Fatal(err)
		}
		return c.Forward(ctx, "POST", n1.httpAddr, "/v1/raft/apply", body, nil)
	}
	if err := send("a"); err != nil {
		t.Fatal(err)
	}
	var digest string
	_ = n1.s.View(func(st *model.State) error {
		digest = st.RequestDigests["req-1"]
		return nil
	})
	if digest == "" {
		t.Fatal("the forwarded request id was stored without its digest")
	}
	if err := send("a"); err != nil {
		t.Fatalf("a retry of the same command: %v", err)
	}
	err := send("b")
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Status != http.StatusConflict {
		t.Fatalf("the same id with another command: %v; want a 409 refusal", err)
	}
	_ = n1.s.View(func(st *model.State) error {
		if _, ok := st.Machines["b"]; ok {
			t.Error("the reused id's command was applied")
		}
		return nil
	})
}
