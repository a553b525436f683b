package model

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Action is one operation an operator asked of one unit: a charm action
// (`fixpoint run`) or a command in the unit's hook context (`fixpoint
// exec`). Its ID is the operation number, as Juju numbers operations;
// it moves pending → running (an agent took it) → completed or failed.
type Action struct {
	ID   int    `json:"id"`
	Unit string `json:"unit"`
	// Name is the charm's action; ExecName for `fixpoint exec`.
	Name   string         `json:"name"`
	Params map[string]any `json:"params,omitempty"`
	// Exec is the shell command of an exec operation.
	Exec   string `json:"exec,omitempty"`
	Status string `json:"status"`
	// Machine is the machine whose agent started it.
	Machine string `json:"machine,omitempty"`
	// Enqueued, Started and Completed are the proposers' clocks (unix
	// nanoseconds).
	Enqueued  int64          `json:"enqueued"`
	Started   int64          `json:"started,omitempty"`
	Completed int64          `json:"completed,omitempty"`
	Message   string         `json:"message,omitempty"`
	Results   map[string]any `json:"results,omitempty"`
	Log       []ActionLog    `json:"log,omitempty"`
}

// ActionLog is one action-log line.
type ActionLog struct {
	Time    int64  `json:"time"`
	Message string `json:"message"`
}

// Action statuses, as Juju names them.
const (
	ActionPending   = "pending"
	ActionRunning   = "running"
	ActionCompleted = "completed"
	ActionFailed    = "failed"
)

// ExecName is the name an exec operation carries.
const ExecName = "exec"

// Finished reports whether the action is over.
func (a *Action) Finished() bool {
	return a.Status == ActionCompleted || a.Status == ActionFailed
}

// Bounds on actions: every one is replicated and kept in every snapshot.
const (
	// MaxActionBytes caps an action's encoded params, and its results.
	MaxActionBytes = 64 << 10
	// MaxActionLog caps the action-log lines kept, MaxActionLogLine each.
	MaxActionLog     = 256
	MaxActionLogLine = 1 << 10
	// MaxExecBytes caps an exec command.
	MaxExecBytes = 16 << 10
	// MaxQueuedActions caps the actions of one unit not yet finished.
	MaxQueuedActions = 64
	// ActionHistory is how many finished actions of a unit are kept; the
	// oldest go first.
	ActionHistory = 20
	// maxActionDepth caps nesting in params and results.
	maxActionDepth = 16
)

// EnqueueAction asks for an action (or exec) on one unit. Params are
// already checked against the charm's declaration with defaults applied
// (CheckActionParams); the FSM checks them again.
type EnqueueAction struct {
	Unit   string         `json:"unit"`
	Name   string         `json:"name"`
	Params map[string]any `json:"params,omitempty"`
	Exec   string         `json:"exec,omitempty"`
}

// StartAction says machine's agent took a pending action: it runs once.
type StartAction struct {
	ID      int    `json:"id"`
	Machine string `json:"machine"`
}

// FinishAction is what an action's run came to. Writes, when set, is
// what it wrote through the hook tools, applied as a hook's writes are.
type FinishAction struct {
	ID      int            `json:"id"`
	Machine string         `json:"machine"`
	Failed  bool           `json:"failed,omitempty"`
	Message string         `json:"message,omitempty"`
	Results map[string]any `json:"results,omitempty"`
	Log     []ActionLog    `json:"log,omitempty"`
	Writes  *Result        `json:"writes,omitempty"`
}

func (e *EnqueueAction) check() error {
	if err := CheckUnitName(e.Unit); err != nil {
		return err
	}
	if e.Name == ExecName {
		if e.Exec == "" || len(e.Exec) > MaxExecBytes {
			return fmt.Errorf("exec on %s: a command of 1 to %d bytes is required", e.Unit, MaxExecBytes)
		}
		if len(e.Params) > 0 {
			return fmt.Errorf("exec on %s takes a command, not params", e.Unit)
		}
		return nil
	}
	if e.Exec != "" {
		return fmt.Errorf("action %s on %s: only exec carries a command", Quote(e.Name, 24), e.Unit)
	}
	if err := CheckActionName(e.Name); err != nil {
		return err
	}
	return checkActionData("params", e.Params)
}

func (f *FinishAction) check() error {
	if f.ID <= 0 {
		return fmt.Errorf("finish action: id %d is not an operation", f.ID)
	}
	if err := CheckName(KindMachine, f.Machine); err != nil {
		return err
	}
	if len(f.Message) > MaxErrorBytes {
		return fmt.Errorf("action %d: message of %d bytes; the limit is %d", f.ID, len(f.Message), MaxErrorBytes)
	}
	if len(f.Log) > MaxActionLog {
		return fmt.Errorf("action %d: %d log lines; the limit is %d", f.ID, len(f.Log), MaxActionLog)
	}
	for i, l := range f.Log {
		if len(l.Message) > MaxActionLogLine {
			return fmt.Errorf("action %d: log line %d of %d bytes; the limit is %d", f.ID, i, len(l.Message), MaxActionLogLine)
		}
	}
	if err := checkActionData("results", f.Results); err != nil {
		return fmt.Errorf("action %d: %w", f.ID, err)
	}
	if f.Writes != nil {
		return f.Writes.check()
	}
	return nil
}

// CheckActionName checks an action's name: Juju's rule, lower-case
// letters, digits and dashes, starting with a letter.
func CheckActionName(name string) error {
	ok := name != "" && len(name) <= MaxNameLen && name[0] >= 'a' && name[0] <= 'z' && !strings.HasSuffix(name, "-")
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'
	}
	if !ok {
		return fmt.Errorf("action name %s: lower-case letters, digits and dashes, starting with a letter, at most %d bytes", Quote(name, 24), MaxNameLen)
	}
	return nil
}

// checkActionData bounds params or results: size and nesting.
func checkActionData(what string, m map[string]any) error {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if len(b) > MaxActionBytes {
		return fmt.Errorf("%s of %d bytes; the limit is %d", what, len(b), MaxActionBytes)
	}
	if depth(m) > maxActionDepth {
		return fmt.Errorf("%s nest deeper than %d levels", what, maxActionDepth)
	}
	return nil
}

func depth(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	case []any:
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	}
	return 0
}

// UnitActions returns unit's actions, oldest first.
func (s *State) UnitActions(unit string) []*Action {
	var out []*Action
	for _, a := range s.Actions {
		if a.Unit == unit {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// NextActions returns, for every unit on machine with an action to run
// and none running, its oldest pending action, by id.
func (s *State) NextActions(machine string) []*Action {
	next := map[string]*Action{}
	busy := map[string]bool{}
	for id := range s.ActiveActions {
		a := s.Actions[id]
		if a == nil {
			continue
		}
		if u := s.Units[a.Unit]; u == nil || u.Machine != machine {
			continue
		}
		if a.Status == ActionRunning {
			busy[a.Unit] = true
			continue
		}
		if n := next[a.Unit]; n == nil || a.ID < n.ID {
			next[a.Unit] = a
		}
	}
	out := make([]*Action, 0, len(next))
	for unit, a := range next {
		if !busy[unit] {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// CheckEnqueue checks e against the state: the unit is there and alive,
// the params fit its charm's declaration, its queue has room. It returns
// the params with the declared defaults filled in.
func (s *State) CheckEnqueue(e *EnqueueAction) (map[string]any, error) {
	u := s.Units[e.Unit]
	if u == nil {
		return nil, fmt.Errorf("unit %s does not exist", e.Unit)
	}
	if u.Life != Alive {
		return nil, fmt.Errorf("unit %s is %s: it runs no more operations", e.Unit, u.Life)
	}
	params := e.Params
	if e.Name != ExecName {
		var err error
		if params, err = CheckActionParams(s.charmOf(u), e.Name, e.Params); err != nil {
			return nil, fmt.Errorf("%s on %s: %w", e.Name, e.Unit, err)
		}
	}
	queued := 0
	for _, unit := range s.ActiveActions {
		if unit == e.Unit {
			queued++
		}
	}
	if queued >= MaxQueuedActions {
		return nil, fmt.Errorf("unit %s has %d operations not finished; the limit is %d: wait for them", e.Unit, queued, MaxQueuedActions)
	}
	return params, nil
}

// enqueueAction records a new pending action; it returns its id.
func (s *State) enqueueAction(at int64, e *EnqueueAction) (int, error) {
	params, err := s.CheckEnqueue(e)
	if err != nil {
		return 0, err
	}
	s.NextAction++
	id := s.NextAction
	s.Actions = withEntry(s.Actions, id, &Action{ID: id, Unit: e.Unit, Name: e.Name, Params: params, Exec: e.Exec, Status: ActionPending, Enqueued: at})
	s.ActiveActions = withEntry(s.ActiveActions, id, e.Unit)
	return id, nil
}

// enqueuedBy is the operation that c, an enqueue already applied under
// its request id, made: a retry must learn the id the first send got, or
// its caller cannot follow the operation it queued. The store resends a
// command whole, so the operation of c's unit, action and command enqueued
// at c's time is it; a caller that sent the request afresh (same id, new
// time) is answered with the only unfinished operation of that unit,
// action and command, if exactly one is. 0 for any other command, or when
// the operation is no longer kept or cannot be told apart.
func (s *State) enqueuedBy(c *Command) int {
	e := c.Enqueue
	if c.Op != OpEnqueue || e == nil {
		return 0
	}
	same := func(a *Action) bool { return a.Unit == e.Unit && a.Name == e.Name && a.Exec == e.Exec }
	for id, a := range s.Actions {
		if same(a) && a.Enqueued == c.Time {
			return id
		}
	}
	found := 0
	for id := range s.ActiveActions {
		if a := s.Actions[id]; a != nil && same(a) {
			if found != 0 {
				return 0
			}
			found = id
		}
	}
	return found
}

// charmOf is unit u's charm's metadata, nil if unknown.
func (s *State) charmOf(u *Unit) *CharmMeta {
	svc := s.Services[u.Service]
	if svc == nil {
		return nil
	}
	if ch := s.Charms[svc.Charm]; ch != nil {
		return &ch.Meta
	}
	return nil
}

// startAction marks a pending action running on machine.
func (s *State) startAction(at int64, st *StartAction) error {
	a, err := s.checkStart(st)
	if err != nil {
		return err
	}
	n := *a
	n.Status, n.Machine, n.Started = ActionRunning, st.Machine, at
	s.Actions = withEntry(s.Actions, a.ID, &n)
	return nil
}

// checkStart refuses to start an operation that does not exist, is not
// pending or whose unit is not on the starting machine.
func (s *State) checkStart(st *StartAction) (*Action, error) {
	a := s.Actions[st.ID]
	if a == nil {
		return nil, fmt.Errorf("operation %d does not exist", st.ID)
	}
	if a.Status != ActionPending {
		return nil, fmt.Errorf("operation %d is %s, not pending: it runs once", st.ID, a.Status)
	}
	if u := s.Units[a.Unit]; u == nil || u.Machine != st.Machine {
		return nil, fmt.Errorf("operation %d is for %s, which is not on machine %s", st.ID, a.Unit, st.Machine)
	}
	return a, nil
}

// checkFinish refuses to finish an operation that is not running on the
// finishing machine, or with writes of another unit.
func (s *State) checkFinish(f *FinishAction) (*Action, error) {
	a := s.Actions[f.ID]
	if a == nil {
		return nil, fmt.Errorf("operation %d does not exist", f.ID)
	}
	if a.Status != ActionRunning || a.Machine != f.Machine {
		return nil, fmt.Errorf("operation %d is %s on machine %q, not running on %s", f.ID, a.Status, a.Machine, f.Machine)
	}
	if f.Writes != nil && f.Writes.Unit != a.Unit {
		return nil, fmt.Errorf("operation %d is for %s, not %s", f.ID, a.Unit, f.Writes.Unit)
	}
	return a, nil
}

// finishAction records what a running action came to and applies what it
// wrote; it returns the writes refused, if any.
func (s *applying) finishAction(index uint64, at int64, f *FinishAction, t *Touched) (string, error) {
	a, err := s.checkFinish(f)
	if err != nil {
		return "", err
	}
	skipped := ""
	// An action that failed by action-fail still exited 0: what it wrote
	// is kept, as Juju keeps it; one whose process failed brings none.
	if f.Writes != nil {
		if u := s.Units[a.Unit]; u != nil {
			t.Units = append(t.Units, u.Name)
			u.Index = index
			skipped = s.applyWrites(index, u, f.Writes, t)
			// What an operation writes is the operator's change: the
			// hooks that follow it are a new wave, however many
			// operations came before and whichever universe it brings
			// back.
			s.newWaves()
			t.Waves = true
		}
	}
	n := *a
	n.Status, n.Completed, n.Message, n.Results, n.Log = ActionCompleted, at, f.Message, f.Results, f.Log
	if f.Failed {
		n.Status = ActionFailed
	}
	s.endAction(&n)
	return skipped, nil
}

// endAction stores a finished action and drops the oldest finished ones
// of its unit beyond ActionHistory.
func (s *State) endAction(a *Action) {
	s.Actions = withEntry(s.Actions, a.ID, a)
	s.ActiveActions = withoutEntry(s.ActiveActions, a.ID)
	var done []int
	for id, o := range s.Actions {
		if o.Unit == a.Unit && o.Finished() {
			done = append(done, id)
		}
	}
	if len(done) <= ActionHistory {
		return
	}
	sort.Ints(done)
	out := make(map[int]*Action, len(s.Actions))
	for id, o := range s.Actions {
		out[id] = o
	}
	for _, id := range done[:len(done)-ActionHistory] {
		delete(out, id)
	}
	s.Actions = out
}

// failActions fails every unfinished action that match says cannot run
// any more, with why. Juju likewise fails an action whose agent went
// away while it ran: it never runs twice.
func (s *State) failActions(at int64, match func(a *Action, u *Unit) string) {
	ids := make([]int, 0, len(s.ActiveActions))
	for id := range s.ActiveActions {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		a := s.Actions[id]
		if a == nil {
			s.ActiveActions = withoutEntry(s.ActiveActions, id)
			continue
		}
		if why := match(a, s.Units[a.Unit]); why != "" {
			n := *a
			n.Status, n.Completed, n.Message = ActionFailed, at, why
			s.endAction(&n)
		}
	}
}

// failRunningOn fails the actions running on machine: its agent started
// again, lost its credential or was lost, so nothing will report them.
func (s *State) failRunningOn(at int64, machine, why string) {
	s.failActions(at, func(a *Action, _ *Unit) string {
		if a.Status == ActionRunning && a.Machine == machine {
			return why
		}
		return ""
	})
}

// runningOn reports whether an operation runs on machine.
func (s *State) runningOn(machine string) bool {
	for id := range s.ActiveActions {
		if a := s.Actions[id]; a != nil && a.Status == ActionRunning && a.Machine == machine {
			return true
		}
	}
	return false
}

// failOrphanActions fails the unfinished actions of units that are gone.
func (s *State) failOrphanActions(at int64) {
	if len(s.ActiveActions) == 0 {
		return
	}
	s.failActions(at, func(a *Action, u *Unit) string {
		if u == nil {
			return fmt.Sprintf("unit %s was removed before the operation finished", a.Unit)
		}
		return ""
	})
}
