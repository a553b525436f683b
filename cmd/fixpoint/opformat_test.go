package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/fixpoint/fixpoint/model"
)

// The layouts run/exec -o, show-operation and operations print, checked
// against Juju 3's (cmd/juju/action: formatActionResult for run and exec,
// formatOperationResult for show-operation and operations).

var opT0 = time.Date(2026, time.December, 5, 11, 0, 0, 0, time.UTC).UnixNano()

// opAt is opT0 plus d.
func opAt(d time.Duration) int64 { return opT0 + int64(d) }

// greetOp is a completed action with params, a log line, nested results,
// Juju's return-code and stdout (with a CRLF), and times off the second.
func greetOp() *model.Action {
	return &model.Action{
		ID: 7, Unit: "kv/0", Name: "greet", Machine: "m1", Status: model.ActionCompleted,
		Params:   map[string]any{"greeting": "hi", "times": 2.0},
		Enqueued: opT0, Started: opAt(1500 * time.Millisecond), Completed: opAt(3 * time.Second),
		Results: map[string]any{"greeting": map[string]any{"text": "hi"}, "return-code": 0.0, "stdout": "a\r\nb\n"},
		Log:     []model.ActionLog{{Time: opAt(2 * time.Second), Message: "working"}},
	}
}

// execOp is a failed exec with stderr and an empty stdout, never started.
func execOp() *model.Action {
	return &model.Action{
		ID: 10, Unit: "web/1", Name: model.ExecName, Exec: "exit 3", Status: model.ActionFailed,
		Message: "exit status 3", Enqueued: opT0, Completed: opAt(time.Minute),
		Results: map[string]any{"return-code": 3.0, "stdout": "", "stderr": "oops\n"},
	}
}

// pendingOp is queued and no more: no times but enqueued, no results.
func pendingOp() *model.Action {
	return &model.Action{ID: 9, Unit: "kv/1", Name: "noop", Status: model.ActionPending}
}

func render(t *testing.T, v any, format string) string {
	t.Helper()
	var b bytes.Buffer
	if err := writeJuju(&b, v, format); err != nil {
		t.Fatalf("%s: %v", format, err)
	}
	return b.String()
}

// sameJSON reports whether JSON text got holds want's value.
func sameJSON(t *testing.T, got string, want any) {
	t.Helper()
	if strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, "\n") {
		t.Errorf("JSON not on one line, as Juju prints it:\n%s", got)
	}
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("JSON %q: %v", got, err)
	}
	b, _ := json.Marshal(want)
	_ = json.Unmarshal(b, &w)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON\n%s\nwant\n%s", got, b)
	}
}

func TestOperationRunLayout(t *testing.T) {
	cases := []struct {
		name     string
		op       *model.Action
		wantYAML string
		wantJSON map[string]any
	}{{
		name: "completed",
		op:   greetOp(),
		wantYAML: `kv/0:
  id: "7"
  log:
  - 2026-12-05 11:00:02 +0000 UTC working
  results:
    greeting:
      text: hi
    return-code: 0
    stdout: |
      a
      b
  status: completed
  timing:
    completed: 2026-12-05 11:00:03 +0000 UTC
    enqueued: 2026-12-05 11:00:00 +0000 UTC
    started: 2026-12-05 11:00:01 +0000 UTC
  unit: kv/0
`,
		wantJSON: map[string]any{"kv/0": map[string]any{
			"id": "7", "log": []any{"2026-12-05 11:00:02 +0000 UTC working"},
			"results": map[string]any{"greeting": map[string]any{"text": "hi"}, "return-code": 0, "stdout": "a\nb\n"},
			"status":  "completed",
			"timing":  map[string]any{"completed": "2026-12-05 11:00:03 +0000 UTC", "enqueued": "2026-12-05 11:00:00 +0000 UTC", "started": "2026-12-05 11:00:01 +0000 UTC"},
			"unit":    "kv/0",
		}},
	}, {
		name: "failed exec",
		op:   execOp(),
		wantYAML: `web/1:
  id: "10"
  message: exit status 3
  results:
    return-code: 3
    stderr: |
      oops
  status: failed
  timing:
    completed: 2026-12-05 11:01:00 +0000 UTC
    enqueued: 2026-12-05 11:00:00 +0000 UTC
  unit: web/1
`,
		wantJSON: map[string]any{"web/1": map[string]any{
			"id": "10", "message": "exit status 3", "results": map[string]any{"return-code": 3, "stderr": "oops\n"},
			"status": "failed", "timing": map[string]any{"completed": "2026-12-05 11:01:00 +0000 UTC", "enqueued": "2026-12-05 11:00:00 +0000 UTC"},
			"unit": "web/1",
		}},
	}, {
		name: "pending, no times",
		op:   pendingOp(),
		wantYAML: `kv/1:
  id: "9"
  status: pending
  unit: kv/1
`,
		wantJSON: map[string]any{"kv/1": map[string]any{"id": "9", "status": "pending", "unit": "kv/1"}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var y bytes.Buffer
			if err := printOperation(&y, c.op, "yaml", time.UTC); err != nil {
				t.Fatal(err)
			}
			if y.String() != c.wantYAML {
				t.Errorf("yaml\n%s\nwant\n%s", y.String(), c.wantYAML)
			}
			var j bytes.Buffer
			if err := printOperation(&j, c.op, "json", time.UTC); err != nil {
				t.Fatal(err)
			}
			sameJSON(t, j.String(), c.wantJSON)
		})
	}
	// Juju prints the keys of a task in alphabetical order, in JSON too.
	j := render(t, runView(greetOp(), time.UTC), "json")
	if !ordered(j, `"id"`, `"log"`, `"results"`, `"status"`, `"timing"`, `"unit"`) || !ordered(j, `"completed"`, `"enqueued"`, `"started"`) {
		t.Errorf("run -o json keys out of Juju's order: %s", j)
	}
	// The results printed are a copy: the operation keeps its stdout.
	op := greetOp()
	runView(op, time.UTC)
	if op.Results["stdout"] != "a\r\nb\n" {
		t.Errorf("runView changed the operation's results: %v", op.Results)
	}
}

// ordered reports whether the words appear in s in this order.
func ordered(s string, words ...string) bool {
	at := 0
	for _, w := range words {
		i := strings.Index(s[at:], w)
		if i < 0 {
			return false
		}
		at += i + len(w)
	}
	return true
}

func TestOperationShowLayout(t *testing.T) {
	cases := []struct {
		name     string
		op       *model.Action
		wantYAML string
		wantJSON map[string]any
	}{{
		name: "action",
		op:   greetOp(),
		wantYAML: `summary: greet run on unit-kv-0
status: completed
action:
  name: greet
  parameters:
    greeting: hi
    times: 2
timing:
  enqueued: 2026-12-05 11:00:00 +0000 UTC
  started: 2026-12-05 11:00:01 +0000 UTC
  completed: 2026-12-05 11:00:03 +0000 UTC
tasks:
  "7":
    host: kv/0
    status: completed
    timing:
      enqueued: 2026-12-05 11:00:00 +0000 UTC
      started: 2026-12-05 11:00:01 +0000 UTC
      completed: 2026-12-05 11:00:03 +0000 UTC
    log:
    - 2026-12-05 11:00:02 +0000 UTC working
    results:
      greeting:
        text: hi
      return-code: 0
      stdout: "a\r\nb\n"
`,
	}, {
		name: "exec",
		op:   execOp(),
		wantJSON: map[string]any{
			"summary": "juju-exec run on unit-web-1", "status": "failed",
			"action": map[string]any{"name": "juju-exec", "parameters": map[string]any{"command": "exit 3"}},
			"timing": map[string]any{"enqueued": "2026-12-05 11:00:00 +0000 UTC", "completed": "2026-12-05 11:01:00 +0000 UTC"},
			"tasks": map[string]any{"10": map[string]any{
				"host": "web/1", "status": "failed", "message": "exit status 3",
				"timing":  map[string]any{"enqueued": "2026-12-05 11:00:00 +0000 UTC", "completed": "2026-12-05 11:01:00 +0000 UTC"},
				"results": map[string]any{"return-code": 3, "stdout": "", "stderr": "oops\n"},
			}},
		},
	}, {
		name: "pending, no times",
		op:   pendingOp(),
		wantYAML: `summary: noop run on unit-kv-1
status: pending
action:
  name: noop
  parameters: {}
tasks:
  "9":
    host: kv/1
    status: pending
`,
		// encoding/json keeps an empty struct, as Juju's does.
		wantJSON: map[string]any{
			"summary": "noop run on unit-kv-1", "status": "pending",
			"action": map[string]any{"name": "noop", "parameters": map[string]any{}},
			"timing": map[string]any{},
			"tasks":  map[string]any{"9": map[string]any{"host": "kv/1", "status": "pending", "timing": map[string]any{}}},
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := operationView(c.op, time.UTC)
			if y := render(t, v, "yaml"); c.wantYAML != "" && y != c.wantYAML {
				t.Errorf("yaml\n%s\nwant\n%s", y, c.wantYAML)
			}
			if c.wantJSON != nil {
				sameJSON(t, render(t, v, "json"), c.wantJSON)
			}
		})
	}
	j := render(t, operationView(greetOp(), time.UTC), "json")
	if !ordered(j, `"summary"`, `"status"`, `"action"`, `"timing"`, `"tasks"`, `"host"`, `"status"`, `"timing"`, `"log"`, `"results"`) {
		t.Errorf("show-operation -o json keys out of Juju's order: %s", j)
	}
}

func TestOperationListLayout(t *testing.T) {
	ops := []model.Action{*execOp(), *pendingOp(), *greetOp()}
	y := render(t, operationsView(ops, time.UTC), "yaml")
	// Keyed by id, in Juju's order of keys (numbers as numbers).
	if !ordered(y, "\"7\":\n  summary: greet run on unit-kv-0\n", "\"9\":\n  summary: noop", "\"10\":\n  summary: juju-exec") {
		t.Errorf("operations -o yaml:\n%s", y)
	}
	var got map[string]operationInfo
	if err := yaml.Unmarshal([]byte(y), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got["10"].Tasks["10"].Host != "web/1" || got["9"].Action.Name != "noop" || got["7"].Tasks["7"].Log[0] != "2026-12-05 11:00:02 +0000 UTC working" {
		t.Errorf("operations -o yaml read back: %+v", got)
	}
	j := render(t, operationsView(ops, time.UTC), "json")
	var m map[string]map[string]any
	if err := json.Unmarshal([]byte(j), &m); err != nil || len(m) != 3 || m["7"]["summary"] != "greet run on unit-kv-0" {
		t.Errorf("operations -o json %v:\n%s", err, j)
	}

	var b bytes.Buffer
	if err := writeOperationsTable(&b, ops, time.UTC); err != nil {
		t.Fatal(err)
	}
	want := `ID  Status     Started              Finished             Task IDs  Summary
 7  completed  2026-12-05T11:00:01  2026-12-05T11:00:03  7         greet run on unit-kv-0
 9  pending                                              9         noop run on unit-kv-1
10  failed                          2026-12-05T11:01:00  10        juju-exec run on unit-web-1
`
	if b.String() != want {
		t.Errorf("operations table\n%s\nwant\n%s", b.String(), want)
	}
}

func TestOperationTimeZone(t *testing.T) {
	loc := time.FixedZone("CET", 3600)
	if got := stamp(opT0, loc); got != "2026-12-05 12:00:00 +0100 CET" {
		t.Errorf("stamp in CET: %q", got)
	}
	if got := tableStamp(opT0, loc); got != "2026-12-05T12:00:00" {
		t.Errorf("tableStamp in CET: %q", got)
	}
	if timeZone(true) != time.UTC || timeZone(false) != time.Local {
		t.Error("--utc picks UTC, else local time")
	}
}

func TestRunPlainOutput(t *testing.T) {
	var out, errs bytes.Buffer
	printAction(&out, &errs, greetOp(), time.UTC)
	if want := "11:00:02 working\n\n"; errs.String() != want {
		t.Errorf("stderr %q, want %q", errs.String(), want)
	}
	if want := "greeting:\n  text: hi\n\na\r\nb\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	out.Reset()
	errs.Reset()
	failed := &model.Action{ID: 3, Unit: "kv/0", Name: "greet", Status: model.ActionFailed, Message: "boom",
		Results: map[string]any{"return-code": 0.0, "stderr": "why\n"}}
	printAction(&out, &errs, failed, time.UTC)
	if want := "Action id 3 failed: boom\n\nwhy\n"; out.String() != want || errs.Len() != 0 {
		t.Errorf("failed: stdout %q, stderr %q; want stdout %q", out.String(), errs.String(), want)
	}
	// What the action logged and its message cannot drive the terminal.
	out.Reset()
	errs.Reset()
	failed.Message = "boom\x1b[2J"
	failed.Log = []model.ActionLog{{Time: opT0, Message: "clear\x1b[2J"}}
	printAction(&out, &errs, failed, time.UTC)
	if !strings.HasPrefix(out.String(), `Action id 3 failed: boom\x1b[2J`+"\n") || errs.String() != `11:00:00 clear\x1b[2J`+"\n\n" {
		t.Errorf("control characters not escaped: stdout %q, stderr %q", out.String(), errs.String())
	}
	out.Reset()
	printAction(&out, &errs, pendingOp(), time.UTC)
	if want := "Task 9 pending\n\n"; out.String() != want {
		t.Errorf("no results: stdout %q, want %q", out.String(), want)
	}
}
