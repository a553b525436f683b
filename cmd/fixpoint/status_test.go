package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
)

// sampleStatus is an environment caught mid-way: a settled leader, a
// unit in error, one pending with a reason, one on a lost machine.
func sampleStatus() *engine.Status {
	return &engine.Status{
		Index: 42, Environment: "shop", Summary: "2 of 5 units pending, 1 error",
		Services: map[string]*engine.ServiceStatus{
			"db":  {Charm: strings.Repeat("d", 64), Life: "alive", Units: 2, Leader: "db/0"},
			"web": {Charm: strings.Repeat("e", 64), Life: "alive", Units: 3, Leader: "web/1"},
		},
		Units: map[string]*engine.UnitStatus{
			"db/0":  {Service: "db", Machine: "m1", Life: "alive", Phase: engine.Settled, Leader: true, Reconciles: 3, Status: model.Status{State: "active", Message: "primary, 2 clients"}},
			"db/1":  {Service: "db", Machine: "m2", Life: "alive", Phase: engine.Error, Reconciles: 5, Status: model.Status{State: "waiting", Message: "installing"}, Error: "hook reconcile exited with status 3: boom"},
			"web/1": {Service: "web", Machine: "m1", Life: "alive", Phase: engine.Reconciling, Leader: true, Reconciles: 1, Status: model.Status{State: "waiting", Message: "waiting for db access"}},
			"web/2": {Service: "web", Machine: "m3", Life: "alive", Phase: engine.Pending, Reason: "waiting for machine m3 to register", Status: model.Status{State: "waiting", Message: "installing"}},
			"web/10": {Service: "web", Machine: "m2", Life: "alive", Phase: engine.Settled, Agent: "lost", Reconciles: 2,
				Status: model.Status{State: "unknown", Message: "agent lost; connected"}},
		},
		Machines: map[string]*engine.MachineStatus{"m1": {State: "started"}, "m2": {State: "lost"}, "m3": {State: "started"}},
	}
}

func TestStatusTable(t *testing.T) {
	var b bytes.Buffer
	st := sampleStatus()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	statusNow = func() time.Time { return now }
	t.Cleanup(func() { statusNow = time.Now })
	st.Units["web/1"].Since = now.Add(-130 * time.Second)
	st.Units["db/1"].Since = now.Add(-5 * time.Second)
	printStatusTo(&b, st, st, false)
	want := `Environment shop: 2 of 5 units pending, 1 error

UNIT      MACHINE    PHASE        SINCE  WORKLOAD  MESSAGE                                          RECONCILES
db                   1/2 settled                   (charm dddddddddddd, alive)
  db/0*   m1         settled      -      active    primary, 2 clients                               3
  db/1    m2         error        5s     waiting   hook reconcile exited with status 3: boom        5
web                  1/3 settled                   (charm eeeeeeeeeeee, alive)
  web/1*  m1         reconciling  2m10s  waiting   waiting for db access                            1
  web/2   m3         pending      -      waiting   installing (waiting for machine m3 to register)  0
  web/10  m2 (lost)  settled      -      unknown   agent lost; connected                            2
`
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestStatusFilters(t *testing.T) {
	st := sampleStatus()
	// --phase blocked selects by the workload's word, whatever the phase.
	st.Units["web/1"].Status = model.Status{State: "blocked", Message: "needs a db relation"}
	if !isPhase("blocked") || isPhase("stuck") {
		t.Errorf("--phase takes blocked: %v, and stuck: %v", isPhase("blocked"), isPhase("stuck"))
	}
	cases := []struct {
		f     statusFilter
		units []string
	}{
		{statusFilter{names: []string{"web"}}, []string{"web/1", "web/10", "web/2"}},
		{statusFilter{names: []string{"db/1", "web/2"}}, []string{"db/1", "web/2"}},
		{statusFilter{phases: []string{"error"}}, []string{"db/1"}},
		{statusFilter{names: []string{"web"}, phases: []string{"settled", "pending"}}, []string{"web/10", "web/2"}},
		{statusFilter{phases: []string{"error"}, names: []string{"web"}}, nil},
		{statusFilter{phases: []string{"blocked"}}, []string{"web/1"}},
		{statusFilter{phases: []string{"blocked", "error"}}, []string{"db/1", "web/1"}},
	}
	for _, c := range cases {
		got := c.f.apply(st)
		units := slices.Sorted(maps.Keys(got.Units))
		if strings.Join(units, " ") != strings.Join(c.units, " ") {
			t.Errorf("%+v: units %v, want %v", c.f, units, c.units)
		}
		for _, u := range got.Units {
			if got.Services[u.Service] == nil {
				t.Errorf("%+v: %s shown without its service", c.f, u.Service)
			}
		}
		if got.Index != st.Index || got.Summary != st.Summary {
			t.Errorf("%+v: the summary is not the whole environment's", c.f)
		}
	}
	var b bytes.Buffer
	shown := (&statusFilter{phases: []string{"error"}}).apply(st)
	printStatusTo(&b, shown, st, false)
	if !strings.Contains(b.String(), "(showing 1 of 5 units)") || strings.Contains(b.String(), "web") {
		t.Errorf("filtered table:\n%s", b.String())
	}
	b.Reset()
	printStatusTo(&b, (&statusFilter{phases: []string{"error"}, names: []string{"web"}}).apply(st), st, false)
	if !strings.Contains(b.String(), "no services match") {
		t.Errorf("empty filtered table:\n%s", b.String())
	}
	if err := (&statusFilter{names: []string{"nope"}}).check(st); err == nil || !strings.Contains(err.Error(), "services: db, web") {
		t.Errorf("unknown name: %v", err)
	}
}

func TestStatusColorKeepsColumnsAligned(t *testing.T) {
	st := sampleStatus()
	t.Setenv("NO_COLOR", "")
	var plain, colored bytes.Buffer
	printStatusTo(&plain, st, st, false)
	printStatusTo(&colored, st, st, true)
	if !strings.Contains(colored.String(), "\x1b[1;31merror\x1b[0m") || !strings.Contains(colored.String(), "\x1b[0;32msettled\x1b[0m") {
		t.Fatalf("no colour on a terminal:\n%q", colored.String())
	}
	if got := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(colored.String(), ""); got != plain.String() {
		t.Errorf("colour moves the columns:\n%s\nplain:\n%s", got, plain.String())
	}
}

func TestStatusYAMLKeepsTheJSONNames(t *testing.T) {
	st := sampleStatus()
	st.Index = 12345678
	var b bytes.Buffer
	if err := writeYAML(&b, st); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "index: 12345678\n") {
		t.Errorf("index is not printed as an integer:\n%s", b.String())
	}
	var back map[string]any
	if err := yaml.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	unit := back["units"].(map[string]any)["db/1"].(map[string]any)
	for _, k := range []string{"phase", "status", "leader", "machine", "reconciles", "error"} {
		if _, ok := unit[k]; !ok {
			t.Errorf("yaml unit lacks %q: %v", k, unit)
		}
	}
	if unit["status"].(map[string]any)["state"] != "waiting" {
		t.Errorf("status.state: %v", unit["status"])
	}
}

func TestProgressPrintsChangesAndTheSummary(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b}
	st := sampleStatus()
	p.update(st)
	first := b.String()
	if n := strings.Count(first, "\n"); n != 6 || !strings.Contains(first, "db/1         error  hook reconcile exited") || !strings.Contains(first, "== 2 of 5 units pending, 1 error") {
		t.Fatalf("first update (%d lines):\n%s", n, first)
	}
	b.Reset()
	p.update(st)
	if b.Len() != 0 {
		t.Fatalf("an unchanged status printed:\n%s", b.String())
	}
	st.Units["web/2"] = &engine.UnitStatus{Service: "web", Phase: engine.Settled, Status: model.Status{State: "active"}}
	delete(st.Units, "db/1")
	st.Summary = "1 of 4 units pending"
	p.update(st)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.HasSuffix(lines[0], "web/2        settled  active") || !strings.HasSuffix(lines[1], "db/1         removed") || !strings.HasSuffix(lines[2], "== 1 of 4 units pending") {
		t.Fatalf("second update:\n%s", b.String())
	}
}

func TestEveryCommandHasHelpWithExamples(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		if c.Short == "" || c.Example == "" {
			t.Errorf("%q has no short help or no examples", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
}

func TestCompletionScripts(t *testing.T) {
	for shell, want := range map[string]string{"bash": "__start_fixpoint", "zsh": "#compdef fixpoint", "fish": "complete -c fixpoint"} {
		root := newRootCmd()
		var b bytes.Buffer
		root.SetOut(&b)
		root.SetArgs([]string{"completion", shell})
		if err := root.Execute(); err != nil {
			t.Fatalf("completion %s: %v", shell, err)
		}
		if !strings.Contains(b.String(), want) {
			t.Errorf("completion %s lacks %q", shell, want)
		}
	}
	// Flags and phases complete without a control plane.
	root := newRootCmd()
	var b bytes.Buffer
	root.SetOut(&b)
	root.SetArgs([]string{cobra.ShellCompRequestCmd, "status", "--phase", ""})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, p := range phases {
		if !strings.Contains(b.String(), p+"\n") {
			t.Errorf("--phase completion lacks %s:\n%s", p, b.String())
		}
	}
}

// TestProgressSpeaksWhileNothingChanges: a wait on a stuck unit prints a
// line every 10 s naming it and how long it has been stuck.
func TestProgressSpeaksWhileNothingChanges(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var b bytes.Buffer
	p := &progress{w: &b, clock: func() time.Time { return now }}
	st := sampleStatus()
	st.Units["web/1"].Since = now.Add(-2 * time.Minute)
	st.Units["web/2"].Since = now.Add(-time.Minute)
	p.update(st)
	b.Reset()
	now = now.Add(5 * time.Second)
	p.update(st)
	if b.Len() != 0 {
		t.Fatalf("printed before 10 s passed:\n%s", b.String())
	}
	now = now.Add(6 * time.Second)
	p.update(st)
	want := "03:04:16  .. still 2 of 5 units pending, 1 error; web/1 reconciling for 2m11s, web/2 pending for 1m11s\n"
	if b.String() != want {
		t.Fatalf("after 11 s:\n%s\nwant prefix:\n%s", b.String(), want)
	}
}

// TestConvergedWithBlockedUnits: the fixed point with blocked units exits
// 0 by default and 6 with --fail-on-blocked, naming them.
func TestConvergedWithBlockedUnits(t *testing.T) {
	st := sampleStatus()
	for _, u := range st.Units {
		u.Phase, u.Error = engine.Settled, ""
	}
	st.Units["web/2"].Status = model.Status{State: "blocked", Message: "needs a db relation"}
	sum := &engine.Summary{Index: 42, Converged: true, Summary: "converged at index 42; 1 blocked",
		Blocked: []engine.UnitBrief{{Unit: "web/2", Phase: engine.Settled, Message: "needs a db relation"}}}
	stdout := os.Stdout
	devnull, _ := os.Open(os.DevNull)
	os.Stdout = devnull
	errPlain := convergeExit(exitOK, sum, st, time.Minute, false, false)
	errFail := convergeExit(exitOK, sum, st, time.Minute, true, false)
	// Beyond the summary's list: the count says how many more.
	sum.MoreBlocked = 41
	errMany := convergeExit(exitOK, sum, nil, time.Minute, true, false)
	os.Stdout = stdout
	devnull.Close()
	if errPlain != nil {
		t.Errorf("without --fail-on-blocked: %v", errPlain)
	}
	var ee *exitError
	if !errors.As(errFail, &ee) || ee.code != exitBlocked || !strings.Contains(ee.msg, "web/2 (needs a db relation)") {
		t.Errorf("with --fail-on-blocked: %v", errFail)
	}
	if !errors.As(errMany, &ee) || ee.code != exitBlocked || !strings.Contains(ee.msg, "42 unit(s) blocked: web/2 (needs a db relation); and 41 more") {
		t.Errorf("with 42 blocked: %v", errMany)
	}
}

// TestStatusShowsTheApplicationStatus: the status a leader set for its
// application (status-set --application, ops's app.status) is on the
// service's line, as juju status shows it, and in the JSON.
func TestStatusShowsTheApplicationStatus(t *testing.T) {
	st := sampleStatus()
	st.Services["db"].Status = &model.Status{State: "active", Message: "db ready"}
	st.Services["db"].Version = "1.0"
	var b bytes.Buffer
	printStatusTo(&b, st, st, false)
	line := regexp.MustCompile(`(?m)^db +1/2 settled +active +db ready \(charm dddddddddddd, alive, version 1\.0\)$`)
	if !line.MatchString(b.String()) {
		t.Errorf("the db line lacks its application status:\n%s", b.String())
	}
	if !regexp.MustCompile(`(?m)^web +1/3 settled +\(charm eeeeeeeeeeee, alive\)$`).MatchString(b.String()) {
		t.Errorf("the web line changed without an application status:\n%s", b.String())
	}
	out, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"db":{"charm":"`+strings.Repeat("d", 64)+`","life":"alive","units":2,"leader":"db/0","status":{"state":"active","message":"db ready"},"version":"1.0"}`) {
		t.Errorf("JSON: %s", out)
	}
}

// TestProgressFromTheSummary: a waiter polling the summary prints a line
// for a unit going into error (once, and again when it fails again after
// leaving error), the summary line when it changes, and while nothing
// changes the units stuck longest with how many more.
func TestProgressFromTheSummary(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var b bytes.Buffer
	p := &progress{w: &b, clock: func() time.Time { return now }}
	sum := &engine.Summary{Index: 7, Summary: "3 of 40 units pending, 1 error",
		Errors: []engine.UnitBrief{{Unit: "db/1", Phase: engine.Error, Message: "hook reconcile exited with status 3: boom", Since: now}},
		Stuck: []engine.UnitBrief{{Unit: "web/1", Phase: engine.Reconciling, Since: now.Add(-2 * time.Minute)},
			{Unit: "db/1", Phase: engine.Error, Since: now}}, MoreStuck: 2}
	p.updateSummary(sum)
	want := "03:04:05  db/1         error  hook reconcile exited with status 3: boom\n03:04:05  == 3 of 40 units pending, 1 error\n"
	if b.String() != want {
		t.Fatalf("first update:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	now = now.Add(11 * time.Second)
	p.updateSummary(sum)
	want = "03:04:16  .. still 3 of 40 units pending, 1 error; web/1 reconciling for 2m11s, db/1 error for 11s, and 2 more\n"
	if b.String() != want {
		t.Fatalf("after 11 s with no change:\n%s\nwant:\n%s", b.String(), want)
	}
	// Retried (out of error), then failing again: said again.
	b.Reset()
	retried := *sum
	retried.Errors, retried.Summary = nil, "3 of 40 units pending"
	p.updateSummary(&retried)
	p.updateSummary(sum)
	want = "03:04:16  == 3 of 40 units pending\n03:04:16  db/1         error  hook reconcile exited with status 3: boom\n03:04:16  == 3 of 40 units pending, 1 error\n"
	if b.String() != want {
		t.Fatalf("retry and fail again:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestSummaryTable: an environment too large for the status table ends a
// wait with a line per service and the first units in error.
func TestSummaryTable(t *testing.T) {
	sum := &engine.Summary{Environment: "big", Summary: "1 of 100000 units pending, 1 error",
		Phases: engine.PhaseCounts{Units: 100000, Settled: 99998, Pending: 1, Error: 1},
		Services: map[string]*engine.ServiceCounts{
			"db0":  {Leader: "db0/0", PhaseCounts: engine.PhaseCounts{Units: 50000, Settled: 49999, Error: 1}},
			"web0": {PhaseCounts: engine.PhaseCounts{Units: 50000, Settled: 49999, Pending: 1}},
		},
		Errors: []engine.UnitBrief{{Unit: "db0/7", Phase: engine.Error, Message: "boom"}}, MoreErrors: 0}
	var b bytes.Buffer
	printSummary(&b, sum)
	want := `Environment big: 1 of 100000 units pending, 1 error
(100000 units: by service; ` + "`fixpoint status SERVICE`" + ` lists a service's units)

SERVICE  UNITS  SETTLED  PENDING  RECONCILING  ERROR  LOST  BLOCKED  LEADER
db0      50000  49999    0        0            1      0     0        db0/0
web0     50000  49999    1        0            0      0     0        -

db0/7 in error: boom
`
	if b.String() != want {
		t.Fatalf("summary table:\n%s\nwant:\n%s", b.String(), want)
	}
}
