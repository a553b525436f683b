package api_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// A follower relaying a work poll to a leader whose answer is held past
// the poll's wait ends the relay and says so at warn level; the agent's
// poll ends with an error, not with its answer held for ever.
func TestAHeldRelayedPollIsWarned(t *testing.T) {
	leader, follower := cluster(t)
	ctx := ctxT(t)
	if _, err := leader.store.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m1", Address: "10.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	rafttest.Eventually(t, time.Minute, "the follower has m1", func() error {
		return follower.store.View(func(st *model.State) error {
			if st.Machines["m1"] == nil {
				return errors.New("not yet")
			}
			return nil
		})
	})
	leader.writes.hold(t)
	op := api.NewClient([]string{follower.addr}, operatorToken, nil)
	work, err := op.Claim(ctx, "m1", 0, 100*time.Millisecond)
	if err == nil {
		t.Fatalf("a poll whose answer the leader held got %d units", len(work))
	}
	rafttest.Eventually(t, time.Minute, "the follower warns of the relay's timeout", func() error {
		if follower.warns.find("relayed work poll ended by timeout") == "" {
			return fmt.Errorf("no warning; the poll ended with %v", err)
		}
		return nil
	})
}
