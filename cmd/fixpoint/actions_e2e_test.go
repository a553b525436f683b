package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// Actions and exec through the real binary: `fixpoint run`, `exec`,
// `operations` and `show-operation` against an `up` running a classic
// charm with actions/ scripts (testdata/charms/classic-kv) and an ops
// charm (testdata/ops/ops-actions, with the real ops framework).

// opView is what the tests read of an operation, from run -o json (the
// unit's task), show-operation -o json or operations -o json.
type opView struct {
	ID      int
	Unit    string
	Action  string
	Status  string
	Message string
	Params  map[string]any
	Results map[string]any
	Log     []string
}

// runJSON is one unit's task as run -o json prints it.
type runJSON struct {
	ID      string            `json:"id"`
	Log     []string          `json:"log"`
	Message string            `json:"message"`
	Results map[string]any    `json:"results"`
	Status  string            `json:"status"`
	Timing  map[string]string `json:"timing"`
	Unit    string            `json:"unit"`
}

// operationJSON is an operation as show-operation -o json prints it.
type operationJSON struct {
	Summary string `json:"summary"`
	Status  string `json:"status"`
	Action  struct {
		Name       string         `json:"name"`
		Parameters map[string]any `json:"parameters"`
	} `json:"action"`
	Timing map[string]string `json:"timing"`
	Tasks  map[string]struct {
		Host    string            `json:"host"`
		Status  string            `json:"status"`
		Timing  map[string]string `json:"timing"`
		Log     []string          `json:"log"`
		Message string            `json:"message"`
		Results map[string]any    `json:"results"`
	} `json:"tasks"`
}

// view is the operation's one task, as the tests read it.
func (o operationJSON) view(t *testing.T) opView {
	t.Helper()
	if len(o.Tasks) != 1 {
		t.Fatalf("operation %+v: %d tasks; want 1", o, len(o.Tasks))
	}
	for id, task := range o.Tasks {
		n, err := strconv.Atoi(id)
		if err != nil {
			t.Fatalf("task id %q: %v", id, err)
		}
		return opView{ID: n, Unit: task.Host, Action: o.Action.Name, Status: task.Status, Message: task.Message,
			Params: o.Action.Parameters, Results: task.Results, Log: task.Log}
	}
	return opView{}
}

// opCLI runs a client command against the control plane under test.
type opCLI func(args ...string) run

// upCLI runs client commands against the up whose data dir is data.
func upCLI(t *testing.T, data string) opCLI {
	return func(args ...string) run {
		t.Helper()
		return fixpoint(t, 6*time.Minute, append(args, "--data-dir", data)...)
	}
}

// statusVia reads status -o json.
func statusVia(t *testing.T, cli opCLI) *engine.Status {
	t.Helper()
	r := cli("status", "-o", "json")
	var st engine.Status
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil {
		t.Fatalf("status exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	return &st
}

// runOp runs fixpoint with args (run or exec, -o json added) and decodes
// the operation it prints.
func runOp(t *testing.T, cli opCLI, wantCode int, args ...string) (opView, run) {
	t.Helper()
	args = append(args, "-o", "json", "--wait", "5m")
	r := cli(args...)
	if r.code != wantCode {
		t.Fatalf("fixpoint %s exited %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, wantCode, r.stdout, r.stderr)
	}
	var m map[string]runJSON
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil || len(m) != 1 {
		t.Fatalf("fixpoint %s printed no unit's task: %v\n%s", strings.Join(args, " "), err, r.stdout)
	}
	for unit, task := range m {
		id, err := strconv.Atoi(task.ID)
		if err != nil || task.Unit != unit {
			t.Fatalf("fixpoint %s printed %s: %+v", strings.Join(args, " "), unit, task)
		}
		return opView{ID: id, Unit: unit, Status: task.Status, Message: task.Message, Results: task.Results, Log: task.Log}, r
	}
	return opView{}, r
}

// nested reads a dotted path of results.
func nested(m map[string]any, path string) any {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

// actionsEnv writes an environment of classic-kv (2 units) and, when
// opsDir is set, ops-actions (1 unit).
func actionsEnv(t *testing.T, dir, opsDir string) string {
	t.Helper()
	kv, err := filepath.Abs(repo("testdata", "charms", "classic-kv"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: \"fixpoint/v1\"\nname: \"acts\"\nservices: {\n\tkv: {charm: %q, units: 2}\n", kv)
	if opsDir != "" {
		fmt.Fprintf(&b, "\toa: {charm: %q, units: 1}\n", opsDir)
	}
	b.WriteString("}\n")
	path := filepath.Join(dir, "acts.cue")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkClassicActions runs classic-kv's actions and exec on the control
// plane whose operator data dir is data.
func checkClassicActions(t *testing.T, cli opCLI) {
	t.Helper()
	// Params (a default filled in), a log line, nested results, a status.
	op, _ := runOp(t, cli, 0, "run", "kv/0", "greet", "greeting=hi", "times=2")
	if op.Status != "completed" || nested(op.Results, "greeting.text") != "hi" || nested(op.Results, "greeting.times") != "2" || op.Results["unit"] != "kv/0" {
		t.Errorf("greet: %+v", op)
	}
	if len(op.Log) != 1 || !strings.HasSuffix(op.Log[0], fmt.Sprintf("greeting 2 times in greet (%d)", op.ID)) {
		t.Errorf("greet log %q", op.Log)
	}
	if p := showOp(t, cli, op.ID, "").Params; p["fail"] != nil || p["greeting"] != "hi" || p["times"] != 2.0 {
		t.Errorf("greet params %v", p)
	}
	if u := statusVia(t, cli).Units["kv/0"]; u.Status.Message != "hi x2" {
		t.Errorf("greet: kv/0's status %+v; want the action's", u.Status)
	}
	// action-fail: exit 1, its message shown.
	op, r := runOp(t, cli, 1, "run", "kv/leader", "greet", "fail=boom")
	if op.Status != "failed" || op.Message != "boom" || !strings.Contains(r.stderr, "failed: boom") {
		t.Errorf("greet fail=boom: %+v\nstderr: %s", op, r.stderr)
	}
	// Params that do not fit the schema are refused before anything is
	// queued.
	before := len(listOps(t, cli, "kv/0"))
	if r := cli("run", "kv/0", "greet", "bogus=1"); r.code != 1 || !strings.Contains(r.stderr, `"bogus" is not a declared parameter`) {
		t.Errorf("greet bogus=1 exited %d: %s", r.code, r.stderr)
	}
	if r := cli("run", "kv/0", "greet", "times=0"); r.code != 1 || !strings.Contains(r.stderr, "below the minimum 1") {
		t.Errorf("greet times=0 exited %d: %s", r.code, r.stderr)
	}
	if after := len(listOps(t, cli, "kv/0")); after != before {
		t.Errorf("refused runs queued operations: %d before, %d after", before, after)
	}
	// The leader's data, written by an action, read back by exec on the
	// other unit.
	op, _ = runOp(t, cli, 0, "run", "kv/leader", "remember", "note=n1")
	if op.Results["remembered"] != "n1" {
		t.Errorf("remember: %+v", op)
	}
	other := "kv/1"
	if op.Unit == "kv/1" {
		other = "kv/0"
	}
	r = cli("exec", "--unit", other, "echo $JUJU_UNIT_NAME; leader-get note; echo to-stderr >&2; exit 3")
	if r.code != 3 || r.stdout != other+"\nn1\n" || !strings.Contains(r.stderr, "to-stderr") {
		t.Errorf("exec exited %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	ops := listOps(t, cli, "")
	if len(ops) < 4 {
		t.Fatalf("operations lists %d; want at least 4", len(ops))
	}
	last := ops[len(ops)-1]
	if last.Action != "juju-exec" || last.Status != "completed" || last.Unit != other {
		t.Errorf("last operation %+v; want the exec", last)
	}
	if r := cli("show-operation", fmt.Sprint(last.ID)); r.code != 0 || !strings.Contains(r.stdout, "return-code: 3") {
		t.Errorf("show-operation %d exited %d:\n%s%s", last.ID, r.code, r.stdout, r.stderr)
	}
	if failed := listOpsBy(t, cli, "--status", "failed"); len(failed) != 1 || failed[0].Message != "boom" {
		t.Errorf("operations --status failed: %+v", failed)
	}
}

func listOps(t *testing.T, cli opCLI, unit string) []opView {
	t.Helper()
	if unit == "" {
		return listOpsBy(t, cli)
	}
	return listOpsBy(t, cli, "--unit", unit)
}

func listOpsBy(t *testing.T, cli opCLI, flags ...string) []opView {
	t.Helper()
	r := cli(append([]string{"operations", "-o", "json"}, flags...)...)
	if r.code == 0 && r.stdout == "" && strings.Contains(r.stderr, "no matching operations") {
		return nil
	}
	var m map[string]operationJSON
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &m) != nil {
		t.Fatalf("operations %v exited %d:\n%s%s", flags, r.code, r.stdout, r.stderr)
	}
	var out []opView
	for id, o := range m {
		v := o.view(t)
		if id != strconv.Itoa(v.ID) {
			t.Fatalf("operations %v: operation %s has task %d", flags, id, v.ID)
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// checkOpsActions runs ops-actions's greet through ops: params with a
// nested default, event.log, nested set_results, event.id, a status and
// peer data, and event.fail.
func checkOpsActions(t *testing.T, cli opCLI) {
	t.Helper()
	op, _ := runOp(t, cli, 0, "run", "oa/0", "greet", "name=bob", "options.loud=true")
	if op.Status != "completed" || nested(op.Results, "greeting.text") != "hello bob!" || nested(op.Results, "greeting.times") != "1" || op.Results["action-id"] != fmt.Sprint(op.ID) {
		t.Errorf("ops greet: %+v", op)
	}
	if len(op.Log) != 1 || !strings.HasSuffix(op.Log[0], "greeting bob 1 times") {
		t.Errorf("ops greet log %q", op.Log)
	}
	if u := statusVia(t, cli).Units["oa/0"]; u.Status.Message != "hello bob!" {
		t.Errorf("ops greet: oa/0's status %+v", u.Status)
	}
	r := cli("exec", "--unit", "oa/0", "relation-get -r $(relation-ids cluster) greeted oa/0")
	if r.code != 0 || r.stdout != "bob\n" {
		t.Errorf("the ops action's peer data: exec exited %d, printed %q %s", r.code, r.stdout, r.stderr)
	}
	op, _ = runOp(t, cli, 1, "run", "oa/0", "greet", "name=x", "fail=nope")
	if op.Status != "failed" || op.Message != "nope" {
		t.Errorf("ops greet fail=nope: %+v", op)
	}
	if r := cli("run", "oa/0", "greet"); r.code != 1 || !strings.Contains(r.stderr, `"name" is required`) {
		t.Errorf("ops greet without name exited %d: %s", r.code, r.stderr)
	}
}

func TestActionsOnUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opsDir := ""
	if fw := opsFrameworkDir(); fw != "" {
		if out, err := exec.Command("/usr/bin/python3", "-c", "import yaml").CombinedOutput(); err != nil {
			t.Fatalf("/usr/bin/python3 cannot import yaml, which ops needs: %v\n%s", err, out)
		}
		opsDir = packOps(t, fw, "ops-actions", filepath.Join(dir, "ops-actions"))
	} else {
		t.Log("the ops framework is not beside the checkout: the ops charm's actions are not run")
	}
	data := t.TempDir()
	up := startUp(t, data, actionsEnv(t, dir, opsDir))
	up.waitConverged(t, 10*time.Minute)
	cli := upCLI(t, data)
	checkClassicActions(t, cli)
	if opsDir != "" {
		checkOpsActions(t, cli)
	}
}

// TestActionsOnCluster runs the same actions on three servers with an
// agent, then queues an action while the agent is down and the Raft
// leader is killed (it runs once, when the agent is back, under the new
// leader), and kills the agent in the middle of an action (the action
// fails, as Juju fails it; it does not run again).
func TestActionsOnCluster(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts four processes; skipped in -short")
	}
	dir := t.TempDir()
	opsDir := ""
	if fw := opsFrameworkDir(); fw != "" {
		opsDir = packOps(t, fw, "ops-actions", filepath.Join(dir, "ops-actions"))
	}
	c := startCluster(t, 3, false, "--agent-ttl", "2s")
	m1 := c.agent("m1")
	c.waitMachines("m1")
	cli := opCLI(c.cli)
	if r := c.cli("apply", "-f", actionsEnv(t, dir, opsDir), "--yes", "--wait", "--timeout", "10m"); r.code != 0 {
		t.Fatalf("apply: %d\n%s\n%s\nagent:\n%s", r.code, r.stdout, r.stderr, m1.out.String())
	}
	checkClassicActions(t, cli)
	if opsDir != "" {
		checkOpsActions(t, cli)
	}

	// Queued while the agent is down, across a change of Raft leader.
	m1.kill()
	r := c.cli("run", "kv/0", "noop", "--background")
	var id int
	if _, err := fmt.Sscanf(r.stdout, "Scheduled operation %d", &id); r.code != 0 || err != nil {
		t.Fatalf("run --background exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	li := c.waitLeader("a Raft leader", -1)
	c.sigkill(li)
	c.waitLeader("a new Raft leader", li)
	if op := showOp(t, cli, id, ""); op.Status != "pending" {
		t.Fatalf("operation %d with its agent down: %+v; want pending", id, op)
	}
	m1 = c.agent("m1")
	if op := showOp(t, cli, id, "5m"); op.Status != "completed" {
		t.Fatalf("operation %d after the agent came back: %+v\nagent:\n%s", id, op, m1.out.String())
	}

	// The agent dies in the middle of an action: it fails, once.
	r = c.cli("run", "kv/0", "hold", "--background")
	if _, err := fmt.Sscanf(r.stdout, "Scheduled operation %d", &id); r.code != 0 || err != nil {
		t.Fatalf("run hold --background exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	rafttest.Eventually(t, 3*time.Minute, "hold running", func() error {
		op := showOp(t, cli, id, "")
		return holds(op.Status == "running", fmt.Sprintf("%+v", op))
	})
	m1.kill()
	m1 = c.agent("m1")
	op := showOp(t, cli, id, "3m")
	if op.Status != "failed" || !strings.Contains(op.Message, "machine m1") {
		t.Fatalf("operation %d whose agent died: %+v; want failed, naming the machine", id, op)
	}
	// The restarted agent runs the unit's next action: the dead one's
	// run lock and process are gone, and hold is not run again.
	op, _ = runOp(t, cli, 0, "run", "kv/0", "noop")
	if op.Status != "completed" {
		t.Fatalf("noop after the agent's death: %+v", op)
	}
	if again := showOp(t, cli, id, ""); again.Status != "failed" {
		t.Errorf("the failed hold changed: %+v", again)
	}
}

// showOp reads operation id, waiting up to wait ("" for not) for it to
// finish.
func showOp(t *testing.T, cli opCLI, id int, wait string) opView {
	t.Helper()
	args := []string{"show-operation", fmt.Sprint(id), "-o", "json"}
	if wait != "" {
		args = append(args, "--wait", wait)
	}
	r := cli(args...)
	var o operationJSON
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &o) != nil {
		t.Fatalf("show-operation %d exited %d: %s%s", id, r.code, r.stdout, r.stderr)
	}
	return o.view(t)
}

// TestGoCharmActionOnUp runs a reconcile charm's action handler
// (testdata/charms/go-actions, charmapi.MainWithActions) through `fixpoint
// run` and exec on `up`: params with a default, a log line, nested
// results, writes (status, private state, peer data) that the next
// reconcile reads, and a failure.
func TestGoCharmActionOnUp(t *testing.T) {
	t.Parallel()
	dir, data := t.TempDir(), t.TempDir()
	charm, err := filepath.Abs(repo("testdata", "charms", "go-actions"))
	if err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(dir, "go.cue")
	if err := os.WriteFile(env, []byte(fmt.Sprintf("apiVersion: \"fixpoint/v1\"\nname: \"goacts\"\nservices: ga: {charm: %q, units: 2}\n", charm)), 0o644); err != nil {
		t.Fatal(err)
	}
	up := startUp(t, data, env)
	up.waitConverged(t, 10*time.Minute)
	cli := upCLI(t, data)
	op, _ := runOp(t, cli, 0, "run", "ga/0", "greet", "name=ann")
	if op.Status != "completed" || nested(op.Results, "greeting.text") != "hello ann" || nested(op.Results, "greeting.times") != 1.0 {
		t.Errorf("greet: %+v", op)
	}
	if len(op.Log) != 1 || !strings.HasSuffix(op.Log[0], "greeting ann 1 times") {
		t.Errorf("greet log %q", op.Log)
	}
	// The handler's state reaches the next reconcile, which keeps the
	// status it set; its peer data reaches ga/1's universe.
	if r := cli("wait", "--timeout", "3m"); r.code != 0 {
		t.Fatalf("wait: %d %s", r.code, r.stderr)
	}
	if u := statusVia(t, cli).Units["ga/0"]; u.Status.Message != "hello ann" {
		t.Errorf("ga/0's status %+v; want the action's, kept by reconcile", u.Status)
	}
	r := cli("debug", "universe", "ga/1")
	if r.code != 0 || !strings.Contains(r.stdout, `"greeted": "ann"`) {
		t.Errorf("ga/1's universe lacks ga/0's greeting: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	op, _ = runOp(t, cli, 1, "run", "ga/1", "greet", "name=fail")
	if op.Status != "failed" || op.Message != "asked to fail" {
		t.Errorf("greet name=fail: %+v", op)
	}
	// exec on a reconcile charm's unit: its directory and FIXPOINT_
	// variables.
	r = cli("exec", "--unit", "ga/1", `echo "$FIXPOINT_UNIT"; test -s "$FIXPOINT_UNIVERSE" && echo universe`)
	if r.code != 0 || r.stdout != "ga/1\nuniverse\n" {
		t.Errorf("exec on ga/1: %d %q %s", r.code, r.stdout, r.stderr)
	}
}
