package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
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

// Screen is the size the dashboard must show fifty services in.
const screenW, screenH = 1920, 1080

// dash drives one headless Chromium tab over the DevTools protocol.
type dash struct {
	t     *testing.T
	ctx   context.Context
	base  string // http://host:port
	token string
	dir   string // screenshots
	loads int
}

// newDash starts Chromium with the flags that work on a closed network
// and a fresh profile, at screenW x screenH in UTC; the test's end stops
// it.
func newDash(t *testing.T, bin, base, token string) *dash {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true), chromedp.Env("TMPDIR="+procTmp(t)),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(screenW, screenH))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	d := &dash{t: t, ctx: ctx, base: base, token: token, dir: t.TempDir()}
	// The first call starts the browser, which lives as long as its
	// context: no timeout on this one.
	utc := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "UTC"})
		return err
	})
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(screenW, screenH), utc); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	return d
}

// run runs actions in the tab, each call bounded.
func (d *dash) run(actions ...chromedp.Action[chromedp.Void]) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(d.ctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		d.t.Fatalf("chromium: %v", err)
	}
}

// open loads the dashboard afresh with the URL fragment frag (search,
// filter, unit) and waits until it has drawn the services of status.
func (d *dash) open(frag string, services int) *pageView {
	d.t.Helper()
	d.loads++
	url := fmt.Sprintf("%s/ui/?wait=500ms&load=%d#token=%s%s", d.base, d.loads, d.token, frag)
	d.run(chromedp.Navigate(url))
	return d.until(fmt.Sprintf("the page drawing %d services", services), func(v *pageView) error {
		if v.Updates < 1 || len(v.Cards) != services {
			return fmt.Errorf("%d updates, %d cards", v.Updates, len(v.Cards))
		}
		return nil
	})
}

// pageView is what the page shows, read off the live DOM.
type pageView struct {
	VW, VH       float64
	Scrolls      bool
	Updates      int
	Mode, Hash   string
	Cards        []box
	Units        []box
	Segs         []box
	Hits         []box
	Times        []struct{ Text, Datetime string }
	Ticks        []string
	Bands        []string
	Panel, Facts string
	// Events are the kinds of the open unit panel's events, newest first.
	Events []string
	Text   string
	// Crossings name each relation line that runs through a card.
	Crossings []string
}

// box is one drawn thing: its name, kind and place on the screen.
type box struct {
	Name, Kind, Fill string
	Dim              bool
	L, T, R, B       float64
	Count            int
	Visible          bool
}

const readPage = `(() => {
  ` + crossings + `
  const rect = (el) => { const r = el.getBoundingClientRect(); return { L: r.left, T: r.top, R: r.right, B: r.bottom }; };
  const wrap = document.getElementById('graph-wrap');
  return {
    VW: innerWidth, VH: innerHeight,
    Scrolls: wrap.scrollHeight > wrap.clientHeight + 1 || wrap.scrollWidth > wrap.clientWidth + 1 ||
      document.documentElement.scrollHeight > innerHeight + 1 || document.documentElement.scrollWidth > innerWidth + 1,
    Updates: Number(document.body.dataset.updates), Mode: document.body.dataset.mode || '', Hash: location.hash,
    Cards: [...document.querySelectorAll('#graph .service')].map((g) => ({ Name: g.dataset.service, Dim: g.classList.contains('dim'), ...rect(g.querySelector('.svc-box')) })),
    Units: [...document.querySelectorAll('#graph .unit')].map((g) => ({ Name: g.dataset.unit, Kind: g.dataset.kind, Fill: getComputedStyle(g.querySelector('rect')).fill, ...rect(g.querySelector('rect')) })),
    Segs: [...document.querySelectorAll('#graph .seg')].map((g) => ({ Name: g.closest('.service').dataset.service, Kind: g.dataset.kind, Count: Number(g.dataset.count) })),
    Hits: [...document.querySelectorAll('#hits .hit')].map((a) => ({ Name: a.dataset.unit, Kind: a.dataset.kind, Visible: !!a.offsetParent, ...rect(a) })),
    Times: [...document.querySelectorAll('time')].map((t) => ({ Text: t.textContent, Datetime: t.getAttribute('datetime') })),
    Ticks: [...document.querySelectorAll('#timeline .tick-label')].map((t) => t.textContent),
    Bands: [...document.querySelectorAll('#timeline .band')].map((b) => b.dataset.kind),
    Panel: document.getElementById('panel').hidden ? '' : document.getElementById('panel').dataset.unit,
    Facts: (document.getElementById('unit-facts') || {}).innerText || '',
    Events: [...document.querySelectorAll('#unit-events tr')].map((r) => r.dataset.kind),
    Text: document.body.innerText,
    Crossings: crossings(),
  };
})()`

// crossings lists the relation lines (orthogonal paths: M x,y then H x
// and V y) that run through the inside of a card, in the graph's own
// coordinates; a line may end on a card's side.
const crossings = `const crossings = () => {
  const cards = [...document.querySelectorAll('#graph .service')].map((g) => {
    const m = /translate\(([-\d.]+),([-\d.]+)\)/.exec(g.getAttribute('transform'));
    const r = g.querySelector('.svc-box');
    return { n: g.dataset.service, x: +m[1], y: +m[2], w: +r.getAttribute('width'), h: +r.getAttribute('height') };
  });
  const out = [];
  for (const p of document.querySelectorAll('#graph .relation')) {
    let x = 0, y = 0;
    for (const tk of p.getAttribute('d').match(/[MHV][^MHV]*/g)) {
      const a = tk.slice(1).trim();
      if (tk[0] === 'M') { [x, y] = a.split(',').map(Number); continue; }
      const nx = tk[0] === 'H' ? Number(a) : x, ny = tk[0] === 'V' ? Number(a) : y;
      for (const b of cards) {
        if (Math.max(x, nx) > b.x + 0.5 && Math.min(x, nx) < b.x + b.w - 0.5 && Math.max(y, ny) > b.y + 0.5 && Math.min(y, ny) < b.y + b.h - 0.5) {
          out.push(p.closest('.relation-group').dataset.relation + ' through ' + b.n);
        }
      }
      x = nx; y = ny;
    }
  }
  return out;
};`

func (d *dash) read() *pageView {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(d.ctx, 2*time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[pageView](readPage))
	if err != nil {
		d.t.Fatalf("chromium: reading the page: %v", err)
	}
	return &v
}

// until reads the page until cond holds.
func (d *dash) until(what string, cond func(v *pageView) error) *pageView {
	d.t.Helper()
	var last *pageView
	rafttest.Eventually(d.t, 2*time.Minute, what, func() error {
		last = d.read()
		return cond(last)
	})
	return last
}

// shot saves a screenshot of the screen as name in the test's temp dir
// and returns it decoded.
func (d *dash) shot(name string) (image.Image, string) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(d.ctx, 2*time.Minute)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		d.t.Fatalf("chromium: screenshot: %v", err)
	}
	path := filepath.Join(d.dir, name)
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		d.t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		d.t.Fatalf("screenshot %s is not a PNG: %v", path, err)
	}
	if sz := img.Bounds().Size(); sz.X != screenW || sz.Y != screenH {
		d.t.Errorf("screenshot %s is %v, want %dx%d", path, sz, screenW, screenH)
	}
	if keep := os.Getenv("FIXPOINT_UI_SCREENSHOTS"); keep != "" {
		_ = os.WriteFile(filepath.Join(keep, name), buf, 0o644)
	}
	return img, path
}

// colourIn counts the pixels of img within tol of c inside b.
func colourIn(img image.Image, b box, c [3]int, tol int) (n, all int) {
	for y := int(b.T) + 1; y < int(b.B)-1; y++ {
		for x := int(b.L) + 1; x < int(b.R)-1; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			all++
			if abs(int(r>>8)-c[0]) <= tol && abs(int(g>>8)-c[1]) <= tol && abs(int(bl>>8)-c[2]) <= tol {
				n++
			}
		}
	}
	return n, all
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// Colours of style.css.
var (
	settledRGB = [3]int{0x2e, 0x9e, 0x5b}
	errorRGB   = [3]int{0xdc, 0x26, 0x26}
	blockedRGB = [3]int{0x7c, 0x3a, 0xed}
)

// fleet is an environment of n services (n-4 a multiple of 4): the
// demo's db and web, fail (its hook fails: in error), orphan (a web with
// no db: blocked), and db-NN with three web-NN each. With big, web-01
// has more units than a card draws one by one.
func fleet(t *testing.T, n int, big bool) string {
	rest := n - 4
	dbs := rest / 4
	var b strings.Builder
	b.WriteString(`apiVersion: "fixpoint/v1"
name: "shop"
services: {
	db:  {charm: "CHARMS/db", units: 2, config: {max_connections: 200}}
	web: {charm: "CHARMS/web", units: 2}
	fail: {charm: "CHARMS/fail-exit", units: 1}
	orphan: {charm: "CHARMS/web", units: 1}
`)
	for i := 1; i <= dbs; i++ {
		fmt.Fprintf(&b, "\t\"db-%02d\": {charm: \"CHARMS/db\", units: 1}\n", i)
	}
	for i := 1; i <= rest-dbs; i++ {
		units := 1
		if big && i == 1 {
			units = 32
		}
		fmt.Fprintf(&b, "\t\"web-%02d\": {charm: \"CHARMS/web\", units: %d}\n", i, units)
	}
	b.WriteString("}\nrelations: {\n\t\"web-db\": [\"web:db\", \"db:db\"]\n\t\"fail-db\": [\"fail:db\", \"db:db\"]\n")
	for i := 1; i <= rest-dbs; i++ {
		fmt.Fprintf(&b, "\t\"web-%02d-db\": [\"web-%02d:db\", \"db-%02d:db\"]\n", i, i, (i-1)/3+1)
	}
	b.WriteString("}\n")
	return writeEnv(t, b.String())
}

// applyFleet applies env and waits, with the status summary's long poll,
// for its fixed point: fail/0 in error, orphan/0 settled and blocked,
// every other unit settled.
func applyFleet(t *testing.T, data string, op *api.Client, env string, units int) {
	t.Helper()
	if r := fixpoint(t, 5*time.Minute, "apply", "-f", env, "--yes", "--data-dir", data); r.code != 0 {
		t.Fatalf("apply: %d %s", r.code, r.stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var sum *engine.Summary
	for {
		next, err := op.WaitSummary(ctx, false, sum, 30*time.Second)
		if err != nil {
			t.Fatalf("the fleet at rest: %v; last seen %s", err, jsonString(sum))
		}
		sum = next
		p := sum.Phases
		if p.Units == units && p.Error == 1 && p.Settled == units-1 && p.Blocked == 1 &&
			sum.Errors[0].Unit == "fail/0" && len(sum.Blocked) == 1 && sum.Blocked[0].Unit == "orphan/0" {
			return
		}
	}
}

// allOnScreen checks that every card is whole on the screen, readable,
// with nothing to scroll to.
func allOnScreen(t *testing.T, v *pageView, shot string) {
	t.Helper()
	if len(v.Crossings) > 0 {
		t.Errorf("relation lines run through cards: %v; screenshot %s", v.Crossings, shot)
	}
	if v.Scrolls {
		t.Errorf("the page scrolls at %vx%v; screenshot %s", v.VW, v.VH, shot)
	}
	for _, c := range v.Cards {
		if c.L < 0 || c.T < 0 || c.R > v.VW || c.B > v.VH || c.B-c.T < 40 {
			t.Errorf("card %s at (%.0f,%.0f)-(%.0f,%.0f) is not whole and readable on the %vx%v screen; screenshot %s", c.Name, c.L, c.T, c.R, c.B, v.VW, v.VH, shot)
		}
	}
}

// unitBox finds unit name among the drawn units.
func unitBox(v *pageView, name string) (box, bool) {
	for _, u := range v.Units {
		if u.Name == name {
			return u, true
		}
	}
	return box{}, false
}

// isoTimes checks that every time the page shows is the instant in its
// datetime attribute in 24-hour ISO 8601 (UTC here: the test sets the
// page's time zone), and that the timeline's ticks are 24-hour times.
func isoTimes(t *testing.T, v *pageView) {
	t.Helper()
	for _, tm := range v.Times {
		at, err := time.Parse(time.RFC3339Nano, tm.Datetime)
		if err != nil {
			t.Errorf("<time datetime=%q>: %v", tm.Datetime, err)
			continue
		}
		at = at.UTC()
		if ok := tm.Text == at.Format("2006-01-02 15:04:05") || tm.Text == at.Format("2006-01-02 15:04:05.000") || tm.Text == at.Format("15:04:05"); !ok {
			t.Errorf("time %q shows %s, want 24-hour ISO 8601", tm.Text, at.Format(time.RFC3339))
		}
	}
	for _, tick := range v.Ticks {
		if !regexp.MustCompile(`^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$`).MatchString(tick) {
			t.Errorf("timeline tick %q is not a 24-hour time", tick)
		}
	}
	if m := regexp.MustCompile(`\d\s?(AM|PM|am|pm)\b`).FindString(v.Text); m != "" {
		t.Errorf("the page shows a 12-hour time (%q)", m)
	}
}

func TestDashboardInHeadlessChromium(t *testing.T) {
	bin := chromium(t)
	start := time.Now()
	stage := func(what string) { t.Logf("%s: %s", time.Since(start).Round(time.Millisecond), what) }
	data := t.TempDir()
	// The unit in error must stay in error while the page is read: its
	// automatic retry would show it reconciling.
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
	op := api.NewClient([]string{base}, ep.Token, nil)
	d := newDash(t, bin, base, ep.Token)
	stage("the demo converged, the browser started")

	// Two services: both cards with their units and the relation, on
	// screen, and a unit's panel from the URL with its last result.
	v := d.open("&unit=web/0", 2)
	img, shot := d.shot("dashboard-2.png")
	allOnScreen(t, v, shot)
	if len(v.Units) != 4 {
		t.Errorf("%d units drawn, want 4: %+v", len(v.Units), v.Units)
	}
	for _, u := range v.Units {
		// A quarter at least: the open unit has a frame, a leader a dot.
		if n, all := colourIn(img, u, settledRGB, 10); u.Kind != "settled" || n < all/4 {
			t.Errorf("unit %s: kind %s, %d of %d pixels settled green; screenshot %s", u.Name, u.Kind, n, all, shot)
		}
	}
	v = d.until("web/0's panel", func(v *pageView) error {
		if v.Panel != "web/0" || !strings.Contains(v.Facts, "service") || !strings.Contains(strings.ToLower(v.Text), "last result") || !strings.Contains(v.Text, `"unit": "web/0"`) {
			return fmt.Errorf("panel %q, facts %q", v.Panel, v.Facts)
		}
		// The unit's events: it was added and its runs succeeded.
		if !slices.Contains(v.Events, "succeeded") || !slices.Contains(v.Events, "created") {
			return fmt.Errorf("panel events %q", v.Events)
		}
		return nil
	})
	isoTimes(t, v)
	stage("2 services checked")

	// Sixteen services, applied while the page is open: it follows.
	before := v.Updates
	applyFleet(t, data, op, fleet(t, 16, false), 2+2+1+1+3+9)
	v = d.until("the open page drawing 16 services", func(v *pageView) error {
		if len(v.Cards) != 16 || v.Updates <= before {
			return fmt.Errorf("%d cards after %d updates", len(v.Cards), v.Updates)
		}
		if u, ok := unitBox(v, "fail/0"); !ok || u.Kind != "error" {
			return fmt.Errorf("fail/0 drawn as %+v", u)
		}
		return nil
	})
	_, shot = d.shot("dashboard-16.png")
	allOnScreen(t, v, shot)
	stage("16 services checked")

	// Sixty services, one of 32 units.
	applyFleet(t, data, op, fleet(t, 60, true), 2+2+1+1+14+32+41)
	v = d.open("", 60)
	stage("60 services converged and drawn")
	img, shot = d.shot("dashboard-60.png")
	allOnScreen(t, v, shot)
	if len(v.Units) != 2+2+1+1+14+41 {
		t.Errorf("%d units drawn one by one, want all but web-01's 32", len(v.Units))
	}
	var bar []string
	for _, s := range v.Segs {
		if s.Name == "web-01" {
			bar = append(bar, fmt.Sprintf("%s=%d", s.Kind, s.Count))
		}
	}
	if strings.Join(bar, " ") != "settled=32" {
		t.Errorf("web-01's 32 units summarised as %v, want settled=32", bar)
	}
	// Blocked is drawn apart: hatched in the blocked colour, not green.
	orphan, ok := unitBox(v, "orphan/0")
	if !ok || orphan.Kind != "blocked" || !strings.Contains(orphan.Fill, "hatch") {
		t.Errorf("orphan/0 drawn as %+v, want blocked and hatched", orphan)
	} else if n, all := colourIn(img, orphan, blockedRGB, 12); n < all/4 {
		t.Errorf("orphan/0: %d of %d pixels in the blocked colour; screenshot %s", n, all, shot)
	} else if g, _ := colourIn(img, orphan, settledRGB, 12); g > 0 {
		t.Errorf("orphan/0 has %d settled-green pixels; screenshot %s", g, shot)
	}
	if failed, ok := unitBox(v, "fail/0"); !ok {
		t.Errorf("fail/0 is not drawn")
	} else if n, all := colourIn(img, failed, errorRGB, 12); n < all/2 {
		t.Errorf("fail/0: %d of %d pixels in the error colour; screenshot %s", n, all, shot)
	}
	// The timeline since the last apply: units pending, then settled,
	// with the one in error and the blocked one.
	v = d.until("the timeline's bands", func(v *pageView) error {
		got := strings.Join(v.Bands, " ")
		if got != "error blocked pending settled" && got != "error blocked pending lost settled" {
			return fmt.Errorf("bands %q", got)
		}
		return nil
	})
	isoTimes(t, v)
	if len(v.Ticks) == 0 || !strings.Contains(v.Text, "since the apply at index") {
		t.Errorf("the timeline has no time axis or heading: ticks %v", v.Ticks)
	}

	// Search: typing a unit's name finds the unit in error, keeps its
	// card lit and the others dimmed, and says so in the URL.
	d.run(chromedp.SendKeys(chromedp.CSS("#search"), "fail/0"))
	v = d.until("the search finding fail/0", func(v *pageView) error {
		if len(v.Hits) != 1 || v.Hits[0].Name != "fail/0" || v.Hits[0].Kind != "error" || !v.Hits[0].Visible {
			return fmt.Errorf("hits %+v", v.Hits)
		}
		return nil
	})
	if !strings.Contains(v.Hash, "q=fail/0") {
		t.Errorf("the URL does not keep the search: %q", v.Hash)
	}
	for _, c := range v.Cards {
		if c.Dim != (c.Name != "fail") {
			t.Errorf("card %s dimmed=%v while searching fail/0", c.Name, c.Dim)
		}
	}
	d.shot("dashboard-60-search.png")
	d.run(chromedp.Click(chromedp.CSS(`#hits .hit[data-unit="fail/0"]`)))
	v = d.until("fail/0's panel", func(v *pageView) error {
		if v.Panel != "fail/0" || !strings.Contains(v.Facts, "boom: cannot reach backend") {
			return fmt.Errorf("panel %q, facts %q", v.Panel, v.Facts)
		}
		return nil
	})
	isoTimes(t, v)

	// Filter from the URL: only units in error are drawn; a click adds
	// the blocked ones and the URL follows.
	v = d.open("&phase=error", 60)
	if len(v.Units) != 1 || v.Units[0].Name != "fail/0" {
		t.Errorf("with phase=error, units drawn: %+v", v.Units)
	}
	for _, s := range v.Segs {
		if s.Kind != "error" {
			t.Errorf("with phase=error, %s's bar shows %d %s", s.Name, s.Count, s.Kind)
		}
	}
	d.shot("dashboard-60-error.png")
	d.run(chromedp.Click(chromedp.CSS(`#filter button[data-kind="blocked"]`)))
	v = d.until("the filter adding blocked units", func(v *pageView) error {
		var names []string
		for _, u := range v.Units {
			names = append(names, u.Name)
		}
		if strings.Join(names, " ") != "fail/0 orphan/0" || !strings.Contains(v.Hash, "phase=error,blocked") {
			return fmt.Errorf("units %v, hash %q", names, v.Hash)
		}
		return nil
	})
	for _, c := range v.Cards {
		if c.Dim != (c.Name != "fail" && c.Name != "orphan") {
			t.Errorf("card %s dimmed=%v with the filter on error and blocked", c.Name, c.Dim)
		}
	}
	stage("60 services checked")

	// A large environment drawn by service from the summary (full=10):
	// bars of counts, every card on screen, the unit in error listed
	// and found by name.
	d.loads++
	d.run(chromedp.Navigate(fmt.Sprintf("%s/ui/?wait=500ms&full=10&load=%d#token=%s&q=fail/0", base, d.loads, ep.Token)))
	v = d.until("the counted page", func(v *pageView) error {
		if v.Mode != "counts" || len(v.Cards) != 60 || len(v.Hits) != 1 || v.Hits[0].Name != "fail/0" {
			return fmt.Errorf("mode %q, %d cards, hits %+v", v.Mode, len(v.Cards), v.Hits)
		}
		return nil
	})
	_, shot = d.shot("dashboard-60-counted.png")
	allOnScreen(t, v, shot)
	if len(v.Units) != 0 || !strings.Contains(v.Text, "fail/0") {
		t.Errorf("the counted page draws %d units one by one, or does not list fail/0", len(v.Units))
	}

	checkEnvPicker(t, d, data)
	up.stop(t)
}
