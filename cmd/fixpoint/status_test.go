package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
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

// metricValues scrapes addr/metrics into name{labels} → value.
func metricValues(t *testing.T, base string) map[string]float64 {
	t.Helper()
	resp, err := (&http.Client{Timeout: time.Minute}).Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, body)
	}
	out := map[string]float64{}
	for _, l := range strings.Split(string(body), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		v, err := strconv.ParseFloat(l[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", l, err)
		}
		out[l[:i]] = v
	}
	return out
}

// normalizeTable blanks what varies between runs: charm hashes, the
// index, times in phase, reconcile counts and column widths.
func normalizeTable(s string) string {
	s = regexp.MustCompile(`[0-9a-f]{12}`).ReplaceAllString(s, "<charm>")
	s = regexp.MustCompile(`index \d+`).ReplaceAllString(s, "index N")
	s = regexp.MustCompile(` (\d+h)?(\d+m)?\d+(\.\d+)?s `).ReplaceAllString(s, " T ")
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		f := strings.Fields(l)
		if strings.HasPrefix(l, "  ") && len(f) > 0 {
			if _, err := strconv.Atoi(f[len(f)-1]); err == nil {
				f[len(f)-1] = "R"
			}
		}
		lines = append(lines, strings.Join(f, " "))
	}
	return strings.Join(lines, "\n")
}

// writeEnv writes an environment into a temporary directory, with its
// charms referred to by absolute path.
func writeEnv(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "env.cue")
	body = strings.ReplaceAll(body, "CHARMS", repo("testdata", "charms"))
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOperatorCommandsAgainstRunningUp(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	up := startUp(t, data, demoEnv)
	st := up.waitConverged(t, converges)
	base := readEndpoint(t, data)
	dd := []string{"--data-dir", data}

	// The table, grouped by service, golden but for what varies.
	r := fixpoint(t, time.Minute, append([]string{"status"}, dd...)...)
	want := `Environment shop: converged at index N
UNIT MACHINE PHASE SINCE WORKLOAD MESSAGE RECONCILES
db 2/2 settled (charm <charm>, alive)
db/0* local settled T active primary, 2 clients R
db/1 local settled T active replica of db/0, 2 clients R
web 2/2 settled (charm <charm>, alive)
web/0* local settled T active connected to 127.0.0.1:6379 db shop as web R
web/1 local settled T active connected to 127.0.0.1:6379 db shop as web R`
	if got := strings.ReplaceAll(normalizeTable(r.stdout), "\n\n", "\n"); r.code != 0 || got != want {
		t.Errorf("status exited %d:\n%s\nwant (normalized):\n%s\nstderr: %s", r.code, got, want, r.stderr)
	}

	// JSON keeps the fields scripts use.
	r = fixpoint(t, time.Minute, append([]string{"status", "--format", "json"}, dd...)...)
	var raw map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
		t.Fatalf("status json: %v\n%s", err, r.stdout)
	}
	for _, k := range []string{"index", "converged", "summary", "services", "units", "machines"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("status json lacks %q", k)
		}
	}
	u := raw["units"].(map[string]any)["web/0"].(map[string]any)
	for _, k := range []string{"phase", "status", "leader", "machine", "reconciles"} {
		if _, ok := u[k]; !ok {
			t.Errorf("status json unit lacks %q: %v", k, u)
		}
	}
	// The index may have moved since: debug-log lines are entries too.
	if raw["converged"] != true || raw["index"].(float64) < float64(st.Index) {
		t.Errorf("status json: converged %v index %v, want true %d", raw["converged"], raw["index"], st.Index)
	}

	// Filters and YAML.
	r = fixpoint(t, time.Minute, append([]string{"status", "web", "--format", "yaml"}, dd...)...)
	var y struct {
		Index uint64
		Units map[string]struct{ Phase string }
	}
	if err := yaml.Unmarshal([]byte(r.stdout), &y); err != nil || y.Index < st.Index || len(y.Units) != 2 || y.Units["web/1"].Phase != "settled" {
		t.Errorf("status web --format yaml (%v): %+v\n%s", err, y, r.stdout)
	}
	r = fixpoint(t, time.Minute, append([]string{"status", "--phase", "error"}, dd...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "no services match") || !strings.Contains(r.stdout, "(showing 0 of 4 units)") {
		t.Errorf("status --phase error: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = fixpoint(t, time.Minute, append([]string{"status", "nope"}, dd...)...)
	if r.code != exitFailed || !strings.Contains(r.stderr, "nope is neither a service nor a unit") {
		t.Errorf("status nope: %d\n%s", r.code, r.stderr)
	}

	// logs: one run per reconcile, with what it changed.
	total := 0
	for _, u := range st.Units {
		total += u.Reconciles
	}
	r = fixpoint(t, time.Minute, append([]string{"logs", "--format", "json"}, dd...)...)
	var runs []engine.Run
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var run engine.Run
		if err := json.Unmarshal([]byte(l), &run); err != nil {
			t.Fatalf("logs json line %q: %v", l, err)
		}
		runs = append(runs, run)
	}
	ok := 0
	for _, run := range runs {
		if run.Outcome == engine.RunOK {
			ok++
			if len(run.Hash) < 12 || run.Duration <= 0 || run.Time.IsZero() {
				t.Errorf("run lacks hash, duration or time: %+v", run)
			}
		}
	}
	if ok != total {
		t.Errorf("logs has %d ok runs, status counts %d reconciles:\n%s", ok, total, r.stdout)
	}
	r = fixpoint(t, time.Minute, append([]string{"logs", "web/0"}, dd...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "  ok ") || !strings.Contains(r.stdout, `status: "waiting: waiting for db access" -> "active: connected to`) ||
		!strings.Contains(r.stdout, `relations.db:`) || strings.Contains(r.stdout, "web/1") {
		t.Errorf("logs web/0: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = fixpoint(t, time.Minute, append([]string{"logs", "nope/3"}, dd...)...)
	if r.code != exitFailed || !strings.Contains(r.stderr, "nope/3 is neither a unit nor a service") {
		t.Errorf("logs nope/3: %d\n%s", r.code, r.stderr)
	}

	// Shell completion offers the running environment's units.
	r = fixpoint(t, time.Minute, cobra.ShellCompRequestCmd, "logs", "--data-dir", data, "web")
	for _, want := range []string{"web\tservice, 2 units", "web/0\tsettled active", "web/1\t"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("completing `logs web` lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "db/0") {
		t.Errorf("completing `logs web` offers db units:\n%s", r.stdout)
	}

	// Metrics after the demo run agree with status.
	m := metricValues(t, base)
	for name, want := range map[string]float64{
		"fixpoint_is_leader": 1, "fixpoint_converged": 1,
		`fixpoint_units{phase="settled"}`: 4, `fixpoint_units{phase="error"}`: 0, "fixpoint_units_in_error": 0,
		"fixpoint_queue_depth": 0, "fixpoint_stale_units": 0, "fixpoint_diverged_units": 0,
		`fixpoint_machines{state="started"}`: 1, `fixpoint_machines{state="lost"}`: 0, `fixpoint_units{phase="lost"}`: 0,
	} {
		if got, ok := m[name]; !ok || got != want {
			t.Errorf("metric %s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	if got := m["fixpoint_index"]; got < float64(st.Index) {
		t.Errorf("metric fixpoint_index = %v, want at least %d", got, st.Index)
	}
	var reconciles, hooks float64
	for _, svc := range []string{"db", "web"} {
		reconciles += m[fmt.Sprintf(`fixpoint_reconciles_total{outcome="ok",service="%s"}`, svc)]
		hooks += m[fmt.Sprintf(`fixpoint_hook_duration_seconds_count{service="%s"}`, svc)]
	}
	if reconciles != float64(total) || hooks != float64(total) {
		t.Errorf("reconciles_total %v, hook durations %v; status counts %d reconciles", reconciles, hooks, total)
	}
	if m["fixpoint_raft_commit_seconds_count"] < 1 || m["fixpoint_raft_fsm_apply_seconds_count"] < 1 {
		t.Errorf("raft latencies not recorded: commit %v, apply %v", m["fixpoint_raft_commit_seconds_count"], m["fixpoint_raft_fsm_apply_seconds_count"])
	}
	// The collections the runtime started and those the idle collector
	// asked for, counted apart.
	for _, name := range []string{"go_gc_cycles_automatic_gc_cycles_total", "go_gc_cycles_forced_gc_cycles_total"} {
		if _, ok := m[name]; !ok {
			t.Errorf("metric %s missing", name)
		}
	}
	if m[`fixpoint_http_requests_total{code="200",route="GET /v1/status"}`] < 1 {
		t.Errorf("status requests not counted")
	}
	for _, probe := range []string{"/healthz", "/readyz"} {
		if code, body := call(t, "GET", base+probe, "", nil); code != 200 || !strings.Contains(body, `"status": "ok"`) {
			t.Errorf("%s: %d %s", probe, code, body)
		}
	}

	// logs --follow sees the runs of a change as they come; apply --wait
	// shows progress and exits 0 at the fixed point.
	follow := startProc(t, append([]string{"logs", "--follow"}, dd...)...)
	rafttest.Eventually(t, time.Minute, "logs --follow printing the history", func() error {
		return holds(strings.Contains(follow.out.String(), "web/1"), follow.out.String())
	})
	scaled := writeEnv(t, `apiVersion: "fixpoint/v1"
name: "shop"
services: {
	db:  {charm: "CHARMS/db", units: 2, config: {max_connections: 200}}
	web: {charm: "CHARMS/web", units: 3}
}
relations: "web-db": ["web:db", "db:db"]
`)
	r = fixpoint(t, 5*time.Minute, append([]string{"apply", "-f", scaled, "--yes", "--wait", "--timeout", "4m"}, dd...)...)
	if r.code != exitOK || !strings.Contains(r.stdout, "web/2") || !strings.Contains(r.stdout, "== converged at index") {
		t.Fatalf("apply --wait exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	rafttest.Eventually(t, time.Minute, "logs --follow showing web/2's runs", func() error {
		return holds(strings.Contains(follow.out.String(), "web/2  ok"), follow.out.String())
	})
	follow.kill()
	if r := fixpoint(t, time.Minute, append([]string{"wait", "--timeout", "1m"}, dd...)...); r.code != exitOK {
		t.Errorf("wait on a converged environment exited %d: %s", r.code, r.stderr)
	}

	// A hook that never returns: wait and apply --wait time out with 4.
	slow := writeEnv(t, `apiVersion: "fixpoint/v1"
name: "shop"
services: {
	db: {charm: "CHARMS/db", units: 1}
	"fail-timeout": {charm: "CHARMS/fail-timeout", units: 1}
}
relations: "fail-timeout-db": ["fail-timeout:db", "db:db"]
`)
	r = fixpoint(t, 5*time.Minute, append([]string{"apply", "-f", slow, "--yes", "--wait", "--timeout", "3s"}, dd...)...)
	if r.code != exitTimeout || !strings.Contains(r.stderr, "no fixed point after 3s") {
		t.Fatalf("apply --wait on a hanging hook exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := fixpoint(t, time.Minute, append([]string{"wait", "--timeout", "2s"}, dd...)...); r.code != exitTimeout {
		t.Errorf("wait on a hanging hook exited %d, want %d: %s", r.code, exitTimeout, r.stderr)
	}

	// A failing hook: 3, naming the unit; status and logs say why.
	failing := writeEnv(t, `apiVersion: "fixpoint/v1"
name: "shop"
services: {
	db: {charm: "CHARMS/db", units: 1}
	"fail-exit": {charm: "CHARMS/fail-exit", units: 1}
}
relations: "fail-exit-db": ["fail-exit:db", "db:db"]
`)
	r = fixpoint(t, 5*time.Minute, append([]string{"apply", "-f", failing, "--yes", "--wait", "--timeout", "4m"}, dd...)...)
	if r.code != exitUnitErr || !strings.Contains(r.stderr, "unit fail-exit/0 is in error") {
		t.Fatalf("apply --wait on a failing hook exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := fixpoint(t, time.Minute, append([]string{"wait", "--timeout", "1m"}, dd...)...); r.code != exitUnitErr || !strings.Contains(r.stderr, "fail-exit/0") {
		t.Errorf("wait with a unit in error exited %d, want %d: %s", r.code, exitUnitErr, r.stderr)
	}
	// --keep-going: 3 too, once the rest settled, naming the errors.
	if r := fixpoint(t, time.Minute, append([]string{"wait", "--keep-going", "--timeout", "1m"}, dd...)...); r.code != exitUnitErr ||
		!strings.Contains(r.stderr, "1 unit(s) in error: fail-exit/0 (") || !strings.Contains(r.stderr, "every other unit settled") {
		t.Errorf("wait --keep-going with a unit in error exited %d, want %d: %s", r.code, exitUnitErr, r.stderr)
	}
	// Retries (after 5s, 10s, ...) move the unit through reconciling and
	// back to error: poll rather than catch one moment.
	rafttest.Eventually(t, time.Minute, "status --phase error showing fail-exit/0 and why", func() error {
		r := fixpoint(t, time.Minute, append([]string{"status", "--phase", "error"}, dd...)...)
		if !strings.Contains(r.stdout, "UNIT") {
			return errors.New(r.stdout + r.stderr)
		}
		rows := unitLines(r.stdout)
		return holds(len(rows) == 1 && strings.HasPrefix(rows[0], "fail-exit/0") && strings.Contains(rows[0], "boom: cannot reach backend"), r.stdout)
	})
	r = fixpoint(t, time.Minute, append([]string{"logs", "fail-exit/0", "--tail", "1"}, dd...)...)
	if !strings.Contains(r.stdout, "  error ") || !strings.Contains(r.stdout, "error: hook reconcile exited with status 3") || !strings.Contains(r.stdout, "stderr| boom: cannot reach backend") {
		t.Errorf("logs fail-exit/0:\n%s%s", r.stdout, r.stderr)
	}
	rafttest.Eventually(t, time.Minute, "metrics counting the failure", func() error {
		m := metricValues(t, base)
		errs := m[`fixpoint_reconciles_total{outcome="error",service="fail-exit"}`]
		return holds(errs >= 1 && m["fixpoint_units_in_error"] == 1 && m["fixpoint_converged"] == 0, fmt.Sprintf("reconciles error %v, units in error %v, converged %v", errs, m["fixpoint_units_in_error"], m["fixpoint_converged"]))
	})
	up.stop(t)
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
