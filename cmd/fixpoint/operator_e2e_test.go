package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

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
db/0* local #0 settled T active primary, 2 clients R
db/1 local #0 settled T active replica of db/0, 2 clients R
web 2/2 settled (charm <charm>, alive)
web/0* local #0 settled T active connected to 127.0.0.1:6379 db shop as web R
web/1 local #0 settled T active connected to 127.0.0.1:6379 db shop as web R`
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
