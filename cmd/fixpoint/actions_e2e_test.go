package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Actions and exec through the real binary: `fixpoint run`, `exec`,
// `operations` and `show-operation` against an `up` running a classic
// charm with actions/ scripts (testdata/charms/classic-kv) and an ops
// charm (testdata/ops/ops-actions, with the real ops framework).

// opView is an operation as run -o json prints it.
type opView struct {
	ID      int            `json:"id"`
	Unit    string         `json:"unit"`
	Action  string         `json:"action"`
	Status  string         `json:"status"`
	Message string         `json:"message"`
	Params  map[string]any `json:"params"`
	Results map[string]any `json:"results"`
	Log     []string       `json:"log"`
}

// runOp runs fixpoint with args (run or exec, -o json added) and decodes
// the operation it prints.
func runOp(t *testing.T, data string, wantCode int, args ...string) (opView, run) {
	t.Helper()
	args = append(args, "-o", "json", "--wait", "5m", "--data-dir", data)
	r := fixpoint(t, 6*time.Minute, args...)
	if r.code != wantCode {
		t.Fatalf("fixpoint %s exited %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, wantCode, r.stdout, r.stderr)
	}
	var v opView
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("fixpoint %s printed no operation: %v\n%s", strings.Join(args, " "), err, r.stdout)
	}
	return v, r
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
func checkClassicActions(t *testing.T, data string) {
	t.Helper()
	// Params (a default filled in), a log line, nested results, a status.
	op, _ := runOp(t, data, 0, "run", "kv/0", "greet", "greeting=hi", "times=2")
	if op.Status != "completed" || nested(op.Results, "greeting.text") != "hi" || nested(op.Results, "greeting.times") != "2" || op.Results["unit"] != "kv/0" {
		t.Errorf("greet: %+v", op)
	}
	if len(op.Log) != 1 || !strings.HasSuffix(op.Log[0], fmt.Sprintf("greeting 2 times in greet (%d)", op.ID)) {
		t.Errorf("greet log %q", op.Log)
	}
	if op.Params["fail"] != nil || op.Params["greeting"] != "hi" {
		t.Errorf("greet params %v", op.Params)
	}
	if u := statusJSON(t, data).Units["kv/0"]; u.Status.Message != "hi x2" {
		t.Errorf("greet: kv/0's status %+v; want the action's", u.Status)
	}
	// action-fail: exit 1, its message shown.
	op, r := runOp(t, data, 1, "run", "kv/leader", "greet", "fail=boom")
	if op.Status != "failed" || op.Message != "boom" || !strings.Contains(r.stderr, "failed: boom") {
		t.Errorf("greet fail=boom: %+v\nstderr: %s", op, r.stderr)
	}
	// Params that do not fit the schema are refused before anything is
	// queued.
	before := len(listOps(t, data, "kv/0"))
	if r := fixpoint(t, time.Minute, "run", "kv/0", "greet", "bogus=1", "--data-dir", data); r.code != 1 || !strings.Contains(r.stderr, `"bogus" is not a declared parameter`) {
		t.Errorf("greet bogus=1 exited %d: %s", r.code, r.stderr)
	}
	if r := fixpoint(t, time.Minute, "run", "kv/0", "greet", "times=0", "--data-dir", data); r.code != 1 || !strings.Contains(r.stderr, "below the minimum 1") {
		t.Errorf("greet times=0 exited %d: %s", r.code, r.stderr)
	}
	if after := len(listOps(t, data, "kv/0")); after != before {
		t.Errorf("refused runs queued operations: %d before, %d after", before, after)
	}
	// The leader's data, written by an action, read back by exec on the
	// other unit.
	op, _ = runOp(t, data, 0, "run", "kv/leader", "remember", "note=n1")
	if op.Results["remembered"] != "n1" {
		t.Errorf("remember: %+v", op)
	}
	other := "kv/1"
	if op.Unit == "kv/1" {
		other = "kv/0"
	}
	r = fixpoint(t, 6*time.Minute, "exec", "--unit", other, "--data-dir", data, "--", "echo $JUJU_UNIT_NAME; leader-get note; echo to-stderr >&2; exit 3")
	if r.code != 3 || r.stdout != other+"\nn1\n" || !strings.Contains(r.stderr, "to-stderr") {
		t.Errorf("exec exited %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	ops := listOps(t, data, "")
	if len(ops) < 4 {
		t.Fatalf("operations lists %d; want at least 4", len(ops))
	}
	last := ops[len(ops)-1]
	if last.Action != "exec" || last.Status != "completed" || last.Unit != other {
		t.Errorf("last operation %+v; want the exec", last)
	}
	if r := fixpoint(t, time.Minute, "show-operation", fmt.Sprint(last.ID), "--data-dir", data); r.code != 0 || !strings.Contains(r.stdout, "return-code: 3") {
		t.Errorf("show-operation %d exited %d:\n%s%s", last.ID, r.code, r.stdout, r.stderr)
	}
	if failed := listOpsBy(t, data, "--status", "failed"); len(failed) != 1 || failed[0].Message != "boom" {
		t.Errorf("operations --status failed: %+v", failed)
	}
}

func listOps(t *testing.T, data, unit string) []opView {
	t.Helper()
	if unit == "" {
		return listOpsBy(t, data)
	}
	return listOpsBy(t, data, "--unit", unit)
}

func listOpsBy(t *testing.T, data string, flags ...string) []opView {
	t.Helper()
	r := fixpoint(t, time.Minute, append([]string{"operations", "-o", "json", "--data-dir", data}, flags...)...)
	var out []opView
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil {
		t.Fatalf("operations %v exited %d:\n%s%s", flags, r.code, r.stdout, r.stderr)
	}
	return out
}

// checkOpsActions runs ops-actions's greet through ops: params with a
// nested default, event.log, nested set_results, event.id, a status and
// peer data, and event.fail.
func checkOpsActions(t *testing.T, data string) {
	t.Helper()
	op, _ := runOp(t, data, 0, "run", "oa/0", "greet", "name=bob", "options.loud=true")
	if op.Status != "completed" || nested(op.Results, "greeting.text") != "hello bob!" || nested(op.Results, "greeting.times") != "1" || op.Results["action-id"] != fmt.Sprint(op.ID) {
		t.Errorf("ops greet: %+v", op)
	}
	if len(op.Log) != 1 || !strings.HasSuffix(op.Log[0], "greeting bob 1 times") {
		t.Errorf("ops greet log %q", op.Log)
	}
	if u := statusJSON(t, data).Units["oa/0"]; u.Status.Message != "hello bob!" {
		t.Errorf("ops greet: oa/0's status %+v", u.Status)
	}
	r := fixpoint(t, 6*time.Minute, "exec", "--unit", "oa/0", "--data-dir", data, "--", "relation-get -r $(relation-ids cluster) greeted oa/0")
	if r.code != 0 || r.stdout != "bob\n" {
		t.Errorf("the ops action's peer data: exec exited %d, printed %q %s", r.code, r.stdout, r.stderr)
	}
	op, _ = runOp(t, data, 1, "run", "oa/0", "greet", "name=x", "fail=nope")
	if op.Status != "failed" || op.Message != "nope" {
		t.Errorf("ops greet fail=nope: %+v", op)
	}
	if r := fixpoint(t, time.Minute, "run", "oa/0", "greet", "--data-dir", data); r.code != 1 || !strings.Contains(r.stderr, `"name" is required`) {
		t.Errorf("ops greet without name exited %d: %s", r.code, r.stderr)
	}
}

func TestActionsOnUp(t *testing.T) {
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
	up := startUpOn(t, data, actionsEnv(t, dir, opsDir))
	up.waitConvergedWithin(t, 10*time.Minute)
	checkClassicActions(t, data)
	if opsDir != "" {
		checkOpsActions(t, data)
	}
}
