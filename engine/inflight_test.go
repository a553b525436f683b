package engine

import (
	"context"
	"testing"

	"github.com/fixpoint/fixpoint/engine/wire"
)

// TestUniversesInFlightFollowTheHookSlots drives 120 units (two pairs of
// 30-unit services with peers) to the fixed point through an agent with
// three hook slots that claims only what its free slots take and reports
// one run at a time. The controller builds universes only at hand-out and
// holds them only in claims, so however large the environment, at most
// one universe per slot is alive at once; at the fixed point none is.
func TestUniversesInFlightFollowTheHookSlots(t *testing.T) {
	const slots = 3
	s := newMemStore()
	pairs(t, s, 2, 30)
	ctl := NewController(s, Options{Window: 1})
	ctx := context.Background()
	var running []wire.Work
	runs := 0
	for round := 0; ; round++ {
		if round > 10000 {
			t.Fatalf("no fixed point after %d rounds (%d runs)", round, runs)
		}
		if free := slots - len(running); free > 0 {
			work, err := ctl.WaitForWork(ctx, "m", free, 0)
			if err != nil {
				t.Fatal(err)
			}
			running = append(running, work...)
		}
		if len(running) == 0 {
			break
		}
		w := running[0]
		running = running[1:]
		runs++
		if _, err := ctl.Accept(ctx, "m", []wire.Report{{Unit: w.Unit, Hash: w.Hash, Output: run(w.Universe)}}); err != nil {
			t.Fatal(err)
		}
		if st := ctl.Stats(); st.PeakClaims > slots {
			t.Fatalf("after %d runs the controller held %d universes in claims at once, for %d hook slots", runs, st.PeakClaims, slots)
		}
	}
	st, err := ctl.Status()
	if err != nil {
		t.Fatal(err)
	}
	if !st.Converged {
		t.Fatalf("no fixed point after %d runs: %s", runs, st.Summary)
	}
	held := claimsHeld(t, ctl)
	if held != 0 {
		t.Fatalf("%d claims, each holding a universe, left at the fixed point", held)
	}
	if ws := ctl.Stats(); ws.PeakClaims == 0 || runs < 120 {
		t.Fatalf("%d runs, peak claims %d: the units never ran", runs, ws.PeakClaims)
	}
}
