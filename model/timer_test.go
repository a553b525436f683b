package model

import "testing"

// TestTimerResultsAreNoStepTowardsDivergence: an update-status run on the
// timer (Result.Timer) does not count towards the divergence bound, and
// what it returns for a universe the unit already reconciled may differ
// without the unit being called diverged; a normal run doing the same is.
func TestTimerResultsAreNoStepTowardsDivergence(t *testing.T) {
	s := NewState()
	apply(t, s, 1, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "a", Address: "10.0.0.1"}})
	apply(t, s, 2, deployCmd(env(nil)))
	run := func(idx uint64, output string, timer bool) {
		apply(t, s, idx, &Command{Op: OpResults, Results: []Result{{Unit: "web/0", Hash: "h", Output: output, Seen: &Seen{Life: Alive}, Timer: timer}}})
	}
	run(3, "o1", false)
	idx := uint64(4)
	for range 2 * DivergeBound {
		run(idx, "o2", true)
		idx++
	}
	u := s.Units["web/0"]
	if u.Wave != 1 || u.Error != nil {
		t.Fatalf("after %d timer runs: wave %d, error %+v", 2*DivergeBound, u.Wave, u.Error)
	}
	apply(t, s, idx, &Command{Op: OpResults, Results: []Result{{Unit: "web/0", Hash: "h", Error: "update-status: exit 1", Timer: true}}})
	if u.Error == nil || !u.Error.Timer || u.Wave != 1 {
		t.Fatalf("a failed timer run: error %+v, wave %d", u.Error, u.Wave)
	}
	run(idx+1, "o3", false)
	if u.Error == nil || u.Error.Kind != ErrDiverged {
		t.Fatalf("a normal run returning something else for a universe of this wave must diverge: %+v", u.Error)
	}
}
