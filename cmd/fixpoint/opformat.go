package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/fixpoint/fixpoint/model"
)

// Operations as run, exec, show-operation and operations print them with
// -o yaml|json: Juju 3's layouts for `juju run --format`, `juju
// show-operation` and `juju operations --format`. An operation has one
// task, whose id is the operation's.

// jujuExecName is the action name Juju gives an exec operation.
const jujuExecName = "juju-exec"

// stampLayout is Go's time.String layout at Juju's whole seconds: how
// Juju prints an operation's times and log lines in yaml and json.
const stampLayout = "2006-01-02 15:04:05 -0700 MST"

// tableLayout is how Juju's operations table prints a time.
const tableLayout = "2006-01-02T15:04:05"

// runTask is one unit's entry in run and exec -o yaml|json. Juju prints a
// map, so its keys are in alphabetical order, as the fields are here.
type runTask struct {
	ID      string         `yaml:"id" json:"id"`
	Log     []string       `yaml:"log,omitempty" json:"log,omitempty"`
	Message string         `yaml:"message,omitempty" json:"message,omitempty"`
	Results map[string]any `yaml:"results,omitempty" json:"results,omitempty"`
	Status  string         `yaml:"status" json:"status"`
	Timing  *runTiming     `yaml:"timing,omitempty" json:"timing,omitempty"`
	Unit    string         `yaml:"unit" json:"unit"`
}

// runTiming is a run entry's times, those set only, in alphabetical order.
type runTiming struct {
	Completed string `yaml:"completed,omitempty" json:"completed,omitempty"`
	Enqueued  string `yaml:"enqueued,omitempty" json:"enqueued,omitempty"`
	Started   string `yaml:"started,omitempty" json:"started,omitempty"`
}

// operationInfo is an operation as show-operation prints it and as each
// value of operations -o yaml|json, in Juju's field order. Fail and Error
// stay empty: fixpoint refuses an operation it cannot queue.
type operationInfo struct {
	Summary string         `yaml:"summary" json:"summary"`
	Status  string         `yaml:"status" json:"status"`
	Fail    string         `yaml:"fail,omitempty" json:"fail,omitempty"`
	Error   string         `yaml:"error,omitempty" json:"error,omitempty"`
	Action  *actionSummary `yaml:"action,omitempty" json:"action,omitempty"`
	// Timing is left out of YAML when empty; JSON has it always, as
	// Juju's encoding/json does with a struct.
	Timing timingInfo          `yaml:"timing,omitempty" json:"timing"`
	Tasks  map[string]taskInfo `yaml:"tasks,omitempty" json:"tasks,omitempty"`
}

// actionSummary is an operation's action and params.
type actionSummary struct {
	Name       string         `yaml:"name" json:"name"`
	Parameters map[string]any `yaml:"parameters" json:"parameters"`
}

// timingInfo is an operation's or a task's times, those set only.
type timingInfo struct {
	Enqueued  string `yaml:"enqueued,omitempty" json:"enqueued,omitempty"`
	Started   string `yaml:"started,omitempty" json:"started,omitempty"`
	Completed string `yaml:"completed,omitempty" json:"completed,omitempty"`
}

// taskInfo is an operation's task: the unit it ran on and what it
// reported.
type taskInfo struct {
	Host    string         `yaml:"host" json:"host"`
	Status  string         `yaml:"status" json:"status"`
	Timing  timingInfo     `yaml:"timing,omitempty" json:"timing"`
	Log     []string       `yaml:"log,omitempty" json:"log,omitempty"`
	Message string         `yaml:"message,omitempty" json:"message,omitempty"`
	Results map[string]any `yaml:"results,omitempty" json:"results,omitempty"`
}

// runView is a's entry of run and exec -o yaml|json, keyed by its unit.
func runView(a *model.Action, loc *time.Location) map[string]runTask {
	t := runTask{ID: strconv.Itoa(a.ID), Log: logLines(a.Log, loc), Message: a.Message, Status: a.Status, Unit: a.Unit}
	if len(a.Results) > 0 {
		t.Results = runResults(a.Results)
	}
	if a.Enqueued != 0 || a.Started != 0 || a.Completed != 0 {
		t.Timing = &runTiming{Completed: stamp(a.Completed, loc), Enqueued: stamp(a.Enqueued, loc), Started: stamp(a.Started, loc)}
	}
	return map[string]runTask{a.Unit: t}
}

// runResults is results as juju run prints them: stdout and stderr only
// when not empty, with CRLF as LF, and return-code an integer.
func runResults(results map[string]any) map[string]any {
	out := make(map[string]any, len(results))
	for k, v := range results {
		out[k] = jsonIntegers(v)
	}
	for _, k := range []string{"stdout", "stderr"} {
		if s, ok := out[k].(string); ok && s != "" {
			out[k] = strings.ReplaceAll(s, "\r\n", "\n")
		} else {
			delete(out, k)
		}
	}
	if code, ok := out["return-code"]; ok {
		if n, err := strconv.Atoi(fmt.Sprint(code)); err == nil {
			out["return-code"] = n
		}
	}
	return out
}

// operationView is a as show-operation prints it.
func operationView(a *model.Action, loc *time.Location) operationInfo {
	name, params := a.Name, jsonIntegersMap(a.Params)
	if a.Name == model.ExecName {
		name, params = jujuExecName, map[string]any{"command": a.Exec}
	}
	if params == nil {
		params = map[string]any{}
	}
	timing := timingInfo{Enqueued: stamp(a.Enqueued, loc), Started: stamp(a.Started, loc), Completed: stamp(a.Completed, loc)}
	return operationInfo{
		Summary: summary(a),
		Status:  a.Status,
		Action:  &actionSummary{Name: name, Parameters: params},
		Timing:  timing,
		Tasks: map[string]taskInfo{strconv.Itoa(a.ID): {
			Host: a.Unit, Status: a.Status, Timing: timing, Log: logLines(a.Log, loc),
			Message: a.Message, Results: jsonIntegersMap(a.Results),
		}},
	}
}

// operationsView is ops as operations -o yaml|json prints them, keyed by
// id.
func operationsView(ops []model.Action, loc *time.Location) map[string]operationInfo {
	out := make(map[string]operationInfo, len(ops))
	for i := range ops {
		out[strconv.Itoa(ops[i].ID)] = operationView(&ops[i], loc)
	}
	return out
}

// summary is Juju's operation summary: the action run on the unit's tag.
func summary(a *model.Action) string {
	name := a.Name
	if name == model.ExecName {
		name = jujuExecName
	}
	return fmt.Sprintf("%s run on unit-%s", name, strings.ReplaceAll(a.Unit, "/", "-"))
}

// writeOperationsTable prints ops as juju operations does: by id, the id
// right-aligned, times as tableLayout.
func writeOperationsTable(w io.Writer, ops []model.Action, loc *time.Location) error {
	sorted := append([]model.Action(nil), ops...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	width := len("ID")
	for _, a := range sorted {
		width = max(width, len(strconv.Itoa(a.ID)))
	}
	rows := [][]string{{fmt.Sprintf("%*s", width, "ID"), "Status", "Started", "Finished", "Task IDs", "Summary"}}
	for _, a := range sorted {
		rows = append(rows, []string{fmt.Sprintf("%*d", width, a.ID), a.Status, tableStamp(a.Started, loc), tableStamp(a.Completed, loc), strconv.Itoa(a.ID), oneLine(summary(&a))})
	}
	return writeColumns(w, rows)
}

// writeColumns prints rows in columns two spaces apart, without trailing
// spaces.
func writeColumns(w io.Writer, rows [][]string) error {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		var line strings.Builder
		for i, c := range r {
			line.WriteString(c)
			if i < len(r)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-len(c)+2))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// logLines is an action's log as Juju prints it: "TIME MESSAGE".
func logLines(log []model.ActionLog, loc *time.Location) []string {
	var out []string
	for _, l := range log {
		out = append(out, stamp(l.Time, loc)+" "+l.Message)
	}
	return out
}

// stamp is ns in loc at whole seconds, as Juju prints it; "" for none.
func stamp(ns int64, loc *time.Location) string {
	if ns == 0 {
		return ""
	}
	return time.Unix(0, ns).In(loc).Truncate(time.Second).Format(stampLayout)
}

// tableStamp is ns in loc as Juju's operations table prints it.
func tableStamp(ns int64, loc *time.Location) string {
	if ns == 0 {
		return ""
	}
	return time.Unix(0, ns).In(loc).Format(tableLayout)
}

// timeZone is where operations' times are printed: UTC with --utc, else
// local time, as Juju.
func timeZone(utc bool) *time.Location {
	if utc {
		return time.UTC
	}
	return time.Local
}

// writeJuju prints v as Juju's commands do: one line of JSON, or YAML
// indented by two with lists at their key's indentation.
func writeJuju(w io.Writer, v any, format string) error {
	if format == "json" {
		return writeJSONStatus(w, v, true)
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("yaml: %w", err)
	}
	return enc.Close()
}

// jsonIntegersMap is m with its whole numbers as integers.
func jsonIntegersMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = jsonIntegers(v)
	}
	return out
}

// jsonIntegers is a decoded JSON value with its whole numbers as
// integers, so YAML prints 1234567 rather than 1.234567e+06.
func jsonIntegers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return jsonIntegersMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonIntegers(e)
		}
		return out
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
	}
	return v
}
