package charmtest

import (
	"encoding/json"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/sim"
)

// ActionResult is what an action handler came to on a universe: what
// it set, logged and failed with, and what it wrote, checked against the
// universe as the engine checks a hook's result.
type ActionResult struct {
	charmapi.ActionOutput
	// Writes is what the handler returned, with the Expect* assertions;
	// nil when it failed with an error (nothing it wrote is kept).
	Writes *Result
}

// RunAction runs the action handler fn as action name with params on u,
// as the engine does for `fixpoint run` (charmapi.MainWithActions), and
// checks what it wrote against u; a result that breaks the contract
// fails the test. params are taken as JSON carries them (numbers are
// float64).
func RunAction(t testing.TB, fn charmapi.ActionFunc, u *charmapi.Universe, name string, params map[string]any) *ActionResult {
	t.Helper()
	out := charmapi.RunAction(fn, u, name, "1", params)
	res := &ActionResult{ActionOutput: out}
	if out.Result == nil {
		return res
	}
	b, err := json.Marshal(out.Result)
	if err != nil {
		t.Fatalf("action %s: encode its result: %v", name, err)
	}
	if _, err := engine.DecodeResult(u, b); err != nil {
		t.Fatalf("action %s wrote what the engine refuses: %v", name, err)
	}
	res.Writes = &Result{Outcome: &sim.Outcome{Result: out.Result, Output: b}, t: t}
	return res
}
