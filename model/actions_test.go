package model

import (
	"fmt"
	"strings"
	"testing"
)

// actionState is db (2 units) on machine m1, db's charm declaring backup
// (dest required, level defaulted, nothing else) and noop.
func actionState(t *testing.T) *State {
	t.Helper()
	s := NewState()
	apply(t, s, 1, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m1", Address: "10.0.0.1"}})
	cs := charms()
	cs["h-db"].Meta.Actions = map[string]ActionSpec{
		"backup": {Params: map[string]any{
			"dest":  map[string]any{"type": "string"},
			"level": map[string]any{"type": "integer", "default": 3.0, "minimum": 1.0},
			"opts":  map[string]any{"type": "object", "default": map[string]any{}, "properties": map[string]any{"fast": map[string]any{"type": "boolean", "default": true}}},
		}, Required: []string{"dest"}, Closed: true},
		"noop": {},
	}
	apply(t, s, 2, &Command{Op: OpDeploy, Deploy: &Deploy{Env: *env(nil), Charms: cs}})
	return s
}

func enqueue(t *testing.T, s *State, idx uint64, unit, name string, params map[string]any) int {
	t.Helper()
	resp := apply(t, s, idx, &Command{Op: OpEnqueue, Time: int64(idx), Enqueue: &EnqueueAction{Unit: unit, Name: name, Params: params}})
	return resp.Action
}

func TestActionLifecycle(t *testing.T) {
	s := actionState(t)
	id := enqueue(t, s, 3, "db/0", "backup", map[string]any{"dest": "/srv"})
	a := s.Actions[id]
	if id != 1 || a.Status != ActionPending || a.Enqueued != 3 {
		t.Fatalf("queued %d: %+v", id, a)
	}
	// Defaults filled in, nested ones too.
	if a.Params["level"] != 3.0 || a.Params["opts"].(map[string]any)["fast"] != true {
		t.Errorf("params %v; want the defaults", a.Params)
	}
	if got := s.NextActions("m1"); len(got) != 1 || got[0].ID != id {
		t.Errorf("next on m1 %v", got)
	}
	apply(t, s, 4, &Command{Op: OpStart, Time: 4, StartAction: &StartAction{ID: id, Machine: "m1"}})
	if a := s.Actions[id]; a.Status != ActionRunning || a.Machine != "m1" || a.Started != 4 {
		t.Fatalf("started: %+v", a)
	}
	// Once: a second start is refused, and a running unit gets no other.
	if _, err := s.Apply(5, &Command{Op: OpStart, Time: 5, StartAction: &StartAction{ID: id, Machine: "m1"}}); err == nil || !strings.Contains(err.Error(), "runs once") {
		t.Errorf("second start: %v", err)
	}
	enqueue(t, s, 6, "db/0", "noop", nil)
	if got := s.NextActions("m1"); len(got) != 0 {
		t.Errorf("next on m1 while db/0 runs one: %v", got)
	}
	// Finished: results, log, and what it wrote lands on the unit.
	resp := apply(t, s, 7, &Command{Op: OpFinish, Time: 7, Finish: &FinishAction{ID: id, Machine: "m1",
		Results: map[string]any{"size": map[string]any{"bytes": "10"}}, Log: []ActionLog{{Time: 6, Message: "copying"}},
		Writes: &Result{Unit: "db/0", Status: &Status{State: "active", Message: "backed up"}}}})
	if len(resp.Skipped) != 0 {
		t.Errorf("skipped %v", resp.Skipped)
	}
	a = s.Actions[id]
	if a.Status != ActionCompleted || a.Completed != 7 || a.Log[0].Message != "copying" || a.Results["size"].(map[string]any)["bytes"] != "10" {
		t.Errorf("finished: %+v", a)
	}
	if st := s.Units["db/0"].Status; st.Message != "backed up" {
		t.Errorf("db/0 status %+v; want the action's", st)
	}
	if tc := resp.Touched(""); tc == nil || !tc.Actions || len(tc.Units) != 1 {
		t.Errorf("touched %+v", tc)
	}
	if _, ok := s.ActiveActions[id]; ok {
		t.Error("finished action still active")
	}
}

func TestActionRefusals(t *testing.T) {
	s := actionState(t)
	for _, c := range []struct {
		e    EnqueueAction
		want string
	}{
		{EnqueueAction{Unit: "db/9", Name: "noop"}, "does not exist"},
		{EnqueueAction{Unit: "db/0", Name: "nope"}, "has no action"},
		{EnqueueAction{Unit: "web/0", Name: "noop"}, "declares no actions"},
		{EnqueueAction{Unit: "db/0", Name: "backup"}, `"dest" is required`},
		{EnqueueAction{Unit: "db/0", Name: "backup", Params: map[string]any{"dest": "x", "level": 0.0}}, "below the minimum"},
		{EnqueueAction{Unit: "db/0", Name: "backup", Params: map[string]any{"dest": "x", "level": 1.5}}, "not of type integer"},
		{EnqueueAction{Unit: "db/0", Name: "backup", Params: map[string]any{"dest": "x", "other": 1.0}}, "not a declared parameter"},
		{EnqueueAction{Unit: "db/0", Name: "Bad_Name"}, "action name"},
		{EnqueueAction{Unit: "db/0", Name: ExecName}, "a command of 1 to"},
		{EnqueueAction{Unit: "db/0", Name: "noop", Exec: "ls"}, "only exec carries a command"},
		{EnqueueAction{Unit: "db/0", Name: "noop", Params: map[string]any{"x": strings.Repeat("a", MaxActionBytes)}}, "the limit is"},
	} {
		before := len(s.Actions)
		_, err := s.Apply(3, &Command{Op: OpEnqueue, Enqueue: &c.e})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want %q", c.e, err, c.want)
		}
		if len(s.Actions) != before {
			t.Errorf("%+v: refused, but queued", c.e)
		}
	}
	// The queue of one unit is bounded.
	for i := 0; i < MaxQueuedActions; i++ {
		enqueue(t, s, uint64(10+i), "db/1", "noop", nil)
	}
	if _, err := s.Apply(1000, &Command{Op: OpEnqueue, Enqueue: &EnqueueAction{Unit: "db/1", Name: "noop"}}); err == nil || !strings.Contains(err.Error(), "not finished") {
		t.Errorf("past the queue bound: %v", err)
	}
	// A machine that does not run it cannot start or finish it.
	if _, err := s.Apply(1001, &Command{Op: OpStart, StartAction: &StartAction{ID: 1, Machine: "m2"}}); err == nil {
		t.Error("started from another machine")
	}
	if _, err := s.Apply(1002, &Command{Op: OpFinish, Finish: &FinishAction{ID: 1, Machine: "m1"}}); err == nil {
		t.Error("finished while pending")
	}
}

func TestActionFailsWhenItsAgentGoes(t *testing.T) {
	s := actionState(t)
	a := enqueue(t, s, 3, "db/0", "noop", nil)
	b := enqueue(t, s, 4, "db/1", "noop", nil)
	apply(t, s, 5, &Command{Op: OpStart, Time: 5, StartAction: &StartAction{ID: a, Machine: "m1"}})
	// The agent registers again: what it ran is failed, what it did not
	// start stays queued.
	apply(t, s, 6, &Command{Op: OpMachine, Time: 6, Machine: &RegisterMachine{Name: "m1", Address: "10.0.0.1"}})
	if got := s.Actions[a]; got.Status != ActionFailed || !strings.Contains(got.Message, "started again") || got.Completed != 6 {
		t.Errorf("running action of a restarted agent: %+v", got)
	}
	if got := s.Actions[b]; got.Status != ActionPending {
		t.Errorf("pending action: %+v", got)
	}
	// A registration that changes nothing else is still admitted while
	// an operation runs there.
	apply(t, s, 7, &Command{Op: OpStart, Time: 7, StartAction: &StartAction{ID: b, Machine: "m1"}})
	if noop, err := s.Admit(&Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m1", Address: "10.0.0.1"}}, nil); noop || err != nil {
		t.Errorf("admit a registration with an operation running: noop %v, %v", noop, err)
	}
	apply(t, s, 8, &Command{Op: OpLiveness, Time: 8, Liveness: &SetLiveness{Lost: map[string]bool{"m1": true}}})
	if got := s.Actions[b]; got.Status != ActionFailed || !strings.Contains(got.Message, "was lost") {
		t.Errorf("running action of a lost machine: %+v", got)
	}
	// A removed unit's queued operations fail.
	c := enqueue(t, s, 9, "db/1", "noop", nil)
	s.dropUnit(s.Units["db/1"])
	s.failOrphanActions(10)
	if got := s.Actions[c]; got.Status != ActionFailed || !strings.Contains(got.Message, "was removed") {
		t.Errorf("queued action of a removed unit: %+v", got)
	}
}

func TestActionHistoryIsBounded(t *testing.T) {
	s := actionState(t)
	idx := uint64(3)
	for i := 0; i < ActionHistory+5; i++ {
		id := enqueue(t, s, idx, "db/0", "noop", nil)
		apply(t, s, idx+1, &Command{Op: OpStart, StartAction: &StartAction{ID: id, Machine: "m1"}})
		apply(t, s, idx+2, &Command{Op: OpFinish, Finish: &FinishAction{ID: id, Machine: "m1"}})
		idx += 3
	}
	got := s.UnitActions("db/0")
	if len(got) != ActionHistory || got[0].ID != 6 || got[len(got)-1].ID != ActionHistory+5 {
		t.Fatalf("kept %d, from %d; want the last %d", len(got), got[0].ID, ActionHistory)
	}
	if s.NextAction != ActionHistory+5 {
		t.Errorf("next id %d: ids are never reused", s.NextAction)
	}
}

// An action writes what a hook may: the secrets it adds, sets and grants
// land in the state when it finishes, as a hook's do, and the secret is
// named among what the command touched.
func TestActionWritesSecrets(t *testing.T) {
	s := actionState(t)
	id := enqueue(t, s, 3, "db/0", "noop", nil)
	apply(t, s, 4, &Command{Op: OpStart, Time: 4, StartAction: &StartAction{ID: id, Machine: "m1"}})
	const sid = "cn0gqa6qs7s1bm0kfp8g"
	label := "from-an-action"
	resp := apply(t, s, 5, &Command{Op: OpFinish, Time: 5, Finish: &FinishAction{ID: id, Machine: "m1",
		Writes: &Result{Unit: "db/0", Secrets: []SecretChange{{Op: SecretOpAdd, ID: sid, Owner: SecretOwnerUnit, Label: &label, Sealed: "opaque"}}}}})
	if len(resp.Skipped) != 0 {
		t.Fatalf("skipped %v", resp.Skipped)
	}
	sec := s.Secrets[sid]
	if sec == nil || sec.Owner != "db/0" || sec.OwnerKind != SecretOwnerUnit || sec.Label != label || len(sec.Revisions) != 1 || sec.Revisions[0].Sealed != "opaque" {
		t.Fatalf("the action's secret: %+v", sec)
	}
	if tc := resp.Touched(""); tc == nil || len(tc.Secrets) != 1 || tc.Secrets[0] != "db/0" {
		t.Errorf("touched %+v; want the secret's audience", tc)
	}
}

// An operation that wrote something starts new waves, as an operator
// change does: the universe it brings back may be answered otherwise
// than before (a legacy charm's install ran the first time), and
// operations past DivergeBound do not make a unit diverge.
func TestActionWritesStartNewWaves(t *testing.T) {
	s := actionState(t)
	result := func(idx uint64, hash, output string) {
		t.Helper()
		apply(t, s, idx, &Command{Op: OpResults, Results: []Result{{Unit: "db/1", Hash: hash, Output: output, Seen: &Seen{Life: Alive}}}})
	}
	idx := uint64(3)
	result(idx, "h0", "installed")
	for i := 0; i <= DivergeBound; i++ {
		id := enqueue(t, s, idx+1, "db/0", "noop", nil)
		apply(t, s, idx+2, &Command{Op: OpStart, Time: int64(idx + 2), StartAction: &StartAction{ID: id, Machine: "m1"}})
		resp := apply(t, s, idx+3, &Command{Op: OpFinish, Time: int64(idx + 3), Finish: &FinishAction{ID: id, Machine: "m1",
			Writes: &Result{Unit: "db/0", State: map[string]string{"n": fmt.Sprint(i)}}}})
		if tc := resp.Touched(""); tc == nil || !tc.Waves {
			t.Fatalf("operation %d: its writes started no new waves: %+v", id, tc)
		}
		result(idx+4, "h0", "nothing to do")
		idx += 4
	}
	if u := s.Units["db/1"]; u.Error != nil || u.Wave != 1 {
		t.Errorf("db/1 after %d operations: wave %d, error %+v", DivergeBound+1, u.Wave, u.Error)
	}
	// Without an operation between, the same universe answered otherwise
	// is divergence still.
	result(idx+1, "h0", "something else")
	if u := s.Units["db/1"]; u.Error == nil || u.Error.Kind != ErrDiverged {
		t.Errorf("db/1 answering h0 otherwise in one wave: %+v", u.Error)
	}
}

// TestEnqueueRetriedAnswersItsOperation: an enqueue applied again under
// its request id (the store resending it whole after a leader change, or
// a caller sending the request afresh) is answered with the operation the
// first made, not with none.
func TestEnqueueRetriedAnswersItsOperation(t *testing.T) {
	s := actionState(t)
	send := func(idx uint64, at int64, req string) *Response {
		t.Helper()
		return apply(t, s, idx, &Command{Op: OpEnqueue, Time: at, RequestID: req, Enqueue: &EnqueueAction{Unit: "db/0", Name: "noop"}})
	}
	first := send(3, 3, "r1")
	if first.Action == 0 || first.Duplicate {
		t.Fatalf("first enqueue: %+v", first)
	}
	if again := send(4, 3, "r1"); !again.Duplicate || again.Action != first.Action || again.Index != 3 {
		t.Errorf("resent whole: %+v; want a duplicate of operation %d at 3", again, first.Action)
	}
	if afresh := send(5, 5, "r1"); !afresh.Duplicate || afresh.Action != first.Action {
		t.Errorf("sent afresh: %+v; want a duplicate of operation %d", afresh, first.Action)
	}
	// Two unfinished operations of the same action: a fresh send cannot
	// tell which, and says none rather than the wrong one.
	second := send(6, 6, "r2")
	if afresh := send(7, 7, "r1"); !afresh.Duplicate || afresh.Action != 0 {
		t.Errorf("sent afresh beside operation %d: %+v; want no operation named", second.Action, afresh)
	}
	if again := send(8, 6, "r2"); again.Action != second.Action {
		t.Errorf("second resent whole: %+v; want operation %d", again, second.Action)
	}
}
