package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
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
	// Timing is timingInfo.keyed: juju run prints its times in
	// alphabetical order.
	Timing map[string]string `yaml:"timing,omitempty" json:"timing,omitempty"`
	Unit   string            `yaml:"unit" json:"unit"`
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

// timingOf is a's times, those set only.
func timingOf(a *model.Action, loc *time.Location) timingInfo {
	return timingInfo{Enqueued: stamp(a.Enqueued, loc), Started: stamp(a.Started, loc), Completed: stamp(a.Completed, loc)}
}

// keyed is t as a map, which both encoders write in alphabetical order;
// nil when no time is set.
func (t timingInfo) keyed() map[string]string {
	var m map[string]string
	for k, v := range map[string]string{"enqueued": t.Enqueued, "started": t.Started, "completed": t.Completed} {
		if v == "" {
			continue
		}
		if m == nil {
			m = map[string]string{}
		}
		m[k] = v
	}
	return m
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
	t.Timing = timingOf(a, loc).keyed()
	return map[string]runTask{a.Unit: t}
}

// runResults is results as juju run prints them: stdout and stderr only
// when not empty, with CRLF as LF, and return-code an integer.
func runResults(results map[string]any) map[string]any {
	out, _ := model.WholeNumbers(results).(map[string]any)
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
	params, _ := model.WholeNumbers(a.Params).(map[string]any)
	results, _ := model.WholeNumbers(a.Results).(map[string]any)
	if a.Name == model.ExecName {
		params = map[string]any{"command": a.Exec}
	}
	timing := timingOf(a, loc)
	return operationInfo{
		Summary: summary(a),
		Status:  a.Status,
		Action:  &actionSummary{Name: jujuName(a), Parameters: params},
		Timing:  timing,
		Tasks: map[string]taskInfo{strconv.Itoa(a.ID): {
			Host: a.Unit, Status: a.Status, Timing: timing, Log: logLines(a.Log, loc),
			Message: a.Message, Results: results,
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
	return fmt.Sprintf("%s run on unit-%s", jujuName(a), strings.ReplaceAll(a.Unit, "/", "-"))
}

// jujuName is a's action name as Juju shows it: juju-exec for an exec.
func jujuName(a *model.Action) string {
	if a.Name == model.ExecName {
		return jujuExecName
	}
	return a.Name
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
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%*s\tStatus\tStarted\tFinished\tTask IDs\tSummary\n", width, "ID")
	for _, a := range sorted {
		fmt.Fprintf(tw, "%*d\t%s\t%s\t%s\t%d\t%s\n", width, a.ID, a.Status, tableStamp(a.Started, loc), tableStamp(a.Completed, loc), a.ID, oneLine(summary(&a)))
	}
	return tw.Flush()
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
