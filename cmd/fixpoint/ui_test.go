package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// chromium finds Debian's headless-capable browser, or skips the test;
// under CI (CI=true) a missing browser fails it, so that CI cannot pass
// without having run it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "the dashboard test needs a headless browser: install Debian's chromium package (apt-get install -y chromium; .ci/run does it)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + "; CI=true, so it may not be skipped")
	}
	t.Skip(msg)
	return ""
}

// browser runs headless chromium on url with extra (--screenshot=...,
// --dump-dom) and returns its stdout. Chromium's virtual time stands still
// while a request is open, so budget counts only the dashboard's pauses
// between blocking queries; wait= in the URL bounds each query.
type browser struct {
	t    *testing.T
	bin  string
	tmp  string
	runs int
}

// chrome is one browser run.
type chrome struct {
	cmd   *exec.Cmd
	out   bytes.Buffer
	errs  bytes.Buffer
	timer *time.Timer
	done  bool
}

// kill ends the browser's whole process group (it forks renderers and
// helpers), once.
func (c *chrome) kill() {
	if !c.done {
		c.done = true
		c.timer.Stop()
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// wait waits for the browser to finish and returns its stdout.
func (c *chrome) wait(t *testing.T) string {
	t.Helper()
	err := c.cmd.Wait()
	c.kill()
	if err != nil {
		t.Fatalf("chromium: %v\n%s\n%s", err, c.out.String(), c.errs.String())
	}
	return c.out.String()
}

func (b *browser) start(url string, budget time.Duration, extra ...string) *chrome {
	b.t.Helper()
	b.runs++
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir=" + filepath.Join(b.tmp, fmt.Sprintf("profile-%d", b.runs)),
		"--window-size=1200,800", fmt.Sprintf("--virtual-time-budget=%d", budget.Milliseconds())}
	args = append(append(args, extra...), url)
	c := &chrome{cmd: exec.Command(b.bin, args...)}
	c.cmd.Env = append(os.Environ(), "TMPDIR="+procTmp(b.t))
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.errs
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	// A browser that hangs must not hang the test run.
	c.timer = time.AfterFunc(4*time.Minute, func() { _ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL) })
	b.t.Cleanup(c.kill)
	return c
}

func (b *browser) run(url string, budget time.Duration, extra ...string) string {
	b.t.Helper()
	return b.start(url, budget, extra...).wait(b.t)
}

// countColor counts the pixels of img below the header within tol of c.
func countColor(img image.Image, c [3]int, tol int, top int) int {
	n := 0
	bnd := img.Bounds()
	for y := bnd.Min.Y + top; y < bnd.Max.Y; y++ {
		for x := bnd.Min.X; x < bnd.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if abs(int(r>>8)-c[0]) <= tol && abs(int(g>>8)-c[1]) <= tol && abs(int(b>>8)-c[2]) <= tol {
				n++
			}
		}
	}
	return n
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// Colours of style.css.
var (
	settledRGB  = [3]int{0x2e, 0x9e, 0x5b}
	relationRGB = [3]int{0x9a, 0xa3, 0xb2}
	errorRGB    = [3]int{0xdc, 0x26, 0x26}
	blockedRGB  = [3]int{0x7c, 0x3a, 0xed}
)

func TestDashboardInHeadlessChromium(t *testing.T) {
	b := &browser{t: t, bin: chromium(t), tmp: t.TempDir()}
	data := t.TempDir()
	// The unit in error below must stay in error while the page is read:
	// its automatic retry would show it reconciling.
	up := startUp(t, data, demoEnv, "--retry-min", "1h")
	up.waitConverged(t, converges)
	raw, err := os.ReadFile(filepath.Join(data, endpointFile))
	if err != nil {
		t.Fatal(err)
	}
	var ep endpoint
	if err := json.Unmarshal(raw, &ep); err != nil {
		t.Fatal(err)
	}
	base := ep.Addr
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	page := base + "/ui/?wait=500ms#token=" + ep.Token

	// The graph, drawn: a screenshot with settled units and a relation line.
	shot := filepath.Join(b.tmp, "dashboard.png")
	b.run(page, 3*time.Second, "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if sz := img.Bounds().Size(); sz.X != 1200 || sz.Y < 600 {
		t.Errorf("screenshot is %v, want 1200 wide", sz)
	}
	if keep := os.Getenv("FIXPOINT_UI_SCREENSHOT"); keep != "" {
		if data, err := os.ReadFile(shot); err == nil {
			_ = os.WriteFile(keep, data, 0o644)
		}
	}
	// Four settled units of 30x30 below the header (the legend's swatch
	// is 12x12), a relation line, and no unit in error.
	if n := countColor(img, settledRGB, 8, 80); n < 4*700 {
		t.Errorf("%d pixels of the settled colour below the header, want the 4 units' (>= %d); screenshot %s", n, 4*700, shot)
	}
	if n := countColor(img, relationRGB, 6, 80); n < 100 {
		t.Errorf("%d pixels of the relation line's colour, want a line; screenshot %s", n, shot)
	}
	if n := countColor(img, errorRGB, 8, 80); n > 12*12+40 {
		t.Errorf("%d pixels of the error colour, more than the legend's swatch; screenshot %s", n, shot)
	}

	// The DOM: a node per service, units with phase classes, the relation,
	// and the panel of the unit named in the URL with its universe and
	// last result.
	dom := b.run(page+"&unit=web/0", 3*time.Second, "--dump-dom")
	for _, want := range []string{
		`data-service="db"`, `data-service="web"`, `data-relation="db:db web:db"`,
		`data-converged="true"`, `id="panel" data-unit="web/0"`,
		`"unit": "web/0"`, `class="run"`, `class="outcome ok"`,
		`id="unit-events"`, `data-kind="succeeded"`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("dashboard DOM lacks %s", want)
		}
	}
	units := regexp.MustCompile(`<g class="unit phase-(\w+)[^"]*" data-unit="([^"]+)"`).FindAllStringSubmatch(dom, -1)
	got := map[string]string{}
	for _, m := range units {
		got[m[2]] = m[1]
	}
	if len(got) != 4 || got["db/0"] != "settled" || got["db/1"] != "settled" || got["web/0"] != "settled" || got["web/1"] != "settled" {
		t.Errorf("units in the DOM: %v", got)
	}
	if t.Failed() {
		t.Fatalf("DOM:\n%s", dom)
	}

	// Live: a page left open sees a unit added after it loaded. Warm the
	// charm cache first (plan packs them), so that the change lands
	// while the page is still polling.
	scaled := writeEnv(t, `apiVersion: "fixpoint/v1"
name: "shop"
services: {
	db:  {charm: "CHARMS/db", units: 2, config: {max_connections: 200}}
	web: {charm: "CHARMS/web", units: 3}
}
relations: "web-db": ["web:db", "db:db"]
`)
	if r := fixpoint(t, 5*time.Minute, "plan", "-f", scaled, "--data-dir", data); r.code != exitChanges {
		t.Fatalf("plan: %d %s", r.code, r.stderr)
	}
	loaded := func() float64 {
		return metricValues(t, base)[`fixpoint_http_requests_total{code="200",route="GET /v1/relations"}`]
	}
	before := loaded()
	live := b.start(page, 20*time.Second, "--dump-dom")
	rafttest.Eventually(t, 2*time.Minute, "the dashboard loading", func() error {
		return holds(loaded() > before, "no GET /v1/relations yet")
	})
	if r := fixpoint(t, 5*time.Minute, "apply", "-f", scaled, "--yes", "--data-dir", data); r.code != 0 {
		t.Fatalf("apply: %d %s", r.code, r.stderr)
	}
	dom = live.wait(t)
	if !regexp.MustCompile(`<g class="unit phase-\w+[^"]*" data-unit="web/2"`).MatchString(dom) {
		t.Fatalf("the open page did not show web/2, added after it loaded:\n%s", dom)
	}
	if m := regexp.MustCompile(`data-updates="(\d+)"`).FindStringSubmatch(dom); m == nil {
		t.Errorf("the page has no data-updates")
	} else if n, _ := strconv.Atoi(m[1]); n < 2 {
		t.Errorf("the page redrew %d times, want at least twice", n)
	}

	// A large environment is drawn by service from the summary: with
	// full=2 the units are counted by phase, no square per unit, the unit
	// in error is listed, and its panel is read from GET /v1/units.
	failing := writeEnv(t, `apiVersion: "fixpoint/v1"
name: "shop"
services: {
	db:  {charm: "CHARMS/db", units: 2, config: {max_connections: 200}}
	web: {charm: "CHARMS/web", units: 3}
	"fail-exit": {charm: "CHARMS/fail-exit", units: 1}
	"orphan-web": {charm: "CHARMS/web", units: 1}
}
relations: {
	"web-db": ["web:db", "db:db"]
	"fail-exit-db": ["fail-exit:db", "db:db"]
}
`)
	if r := fixpoint(t, 5*time.Minute, "apply", "-f", failing, "--yes", "--data-dir", data); r.code != 0 {
		t.Fatalf("apply: %d %s", r.code, r.stderr)
	}
	// At rest: the error is of fail-exit/0's current universe (db's
	// answer on the new relation re-runs it at once, retries or not) and
	// every other unit is settled, orphan-web/0 blocked (no db).
	rafttest.Eventually(t, 2*time.Minute, "fail-exit/0 in error, the rest settled", func() error {
		st := statusOf(t, data)
		if st == nil || len(st.Units) != 7 || st.Units["orphan-web/0"].Status.State != "blocked" {
			return errors.New(jsonString(st))
		}
		for name, u := range st.Units {
			if want := map[bool]string{true: "error", false: "settled"}[name == "fail-exit/0"]; u.Phase != want {
				return errors.New(jsonString(st))
			}
		}
		r := fixpoint(t, time.Minute, "debug", "explain", "fail-exit/0", "--json", "--data-dir", data)
		var e engine.Explanation
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &e) != nil {
			return errors.New(r.stdout + r.stderr)
		}
		return holds(e.Error != nil && e.Error.Hash == e.Current, r.stdout)
	})
	// A blocked unit is drawn in the blocked colour, not as settled.
	dom = b.run(page, 3*time.Second, "--dump-dom")
	drawnBlocked := regexp.MustCompile(`<g class="unit phase-settled[^"]* blocked[^"]*" data-unit="([^"]+)"`).FindAllStringSubmatch(dom, -1)
	if len(drawnBlocked) != 1 || drawnBlocked[0][1] != "orphan-web/0" {
		t.Errorf("units drawn blocked: %v, want orphan-web/0 alone:\n%s", drawnBlocked, dom)
	}
	b.run(page, 3*time.Second, "--screenshot="+shot)
	if f, err := os.Open(shot); err != nil {
		t.Errorf("no screenshot: %v", err)
	} else {
		img, err := png.Decode(f)
		f.Close()
		// A 30x30 unit, not just the legend's 12x12 swatch.
		if err != nil {
			t.Errorf("screenshot: %v", err)
		} else if n := countColor(img, blockedRGB, 8, 80); n < 700 {
			t.Errorf("%d pixels of the blocked colour, want a unit's (>= 700); screenshot %s", n, shot)
		}
	}
	counted := base + "/ui/?wait=500ms&full=2#token=" + ep.Token + "&unit=fail-exit/0"
	dom = b.run(counted, 3*time.Second, "--dump-dom")
	for _, want := range []string{
		`data-mode="counts"`, `data-service="web"`, `data-relation="db:db web:db"`,
		`<g class="count phase-settled" data-phase="settled" data-count="3"`,
		`<g class="count phase-error" data-phase="error" data-count="1"`,
		`class="att phase-error"`, `data-unit="fail-exit/0"`,
		`id="panel" data-unit="fail-exit/0"`, `<dt>error</dt>`, `"unit": "fail-exit/0"`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the counted dashboard lacks %s", want)
		}
	}
	if strings.Contains(dom, `<g class="unit `) {
		t.Errorf("the counted dashboard draws units one by one")
	}
	if t.Failed() {
		t.Fatalf("DOM:\n%s", dom)
	}
	up.stop(t)
}
