package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

// The summary names the lost machines that hold units back, not every
// silent machine a join token registered: hundreds of those grew it to
// kilobytes and named machines that hold nothing.
func TestLostSummaryNamesMachinesThatHoldUnits(t *testing.T) {
	s := newMemStore()
	shop(t, s, 1, 1) // both units on machine m
	ctx := context.Background()
	lost := map[string]bool{"m": true}
	for i := range 300 {
		name := fmt.Sprintf("idle%d", i)
		if _, err := s.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: name, Address: "10.0.1.1"}}); err != nil {
			t.Fatal(err)
		}
		lost[name] = true
	}
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpLiveness, Liveness: &model.SetLiveness{Lost: lost}}); err != nil {
		t.Fatal(err)
	}
	ctl := NewController(s, Options{})
	st, err := ctl.Status()
	if err != nil {
		t.Fatal(err)
	}
	sum, err := ctl.Summary(10)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("converged over 0 of 2 units at index %d; machine m lost", st.Index)
	if st.Summary != want || sum.Summary != want {
		t.Errorf("status summary %q, summary %q; want %q", st.Summary, sum.Summary, want)
	}
}
