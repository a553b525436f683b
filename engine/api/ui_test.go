package api

import (
	"regexp"
	"strings"
	"testing"
)

// TestDashboardColoursBlockedUnitsApart: a settled unit whose workload
// says blocked is drawn in a colour of its own, not the settled green,
// and the legend names it. (cmd/fixpoint's headless-browser test checks
// the drawn page.)
func TestDashboardColoursBlockedUnitsApart(t *testing.T) {
	read := func(name string) string {
		t.Helper()
		data, err := uiFiles.ReadFile("ui/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	css, html, js := read("style.css"), read("index.html"), read("app.js")
	colours := map[string]string{}
	for _, m := range regexp.MustCompile(`--(settled|pending|reconciling|error|blocked):\s*(#[0-9a-fA-F]+);`).FindAllStringSubmatch(css, -1) {
		colours[m[1]] = strings.ToLower(m[2])
	}
	if colours["blocked"] == "" {
		t.Fatalf("style.css defines no --blocked colour: %v", colours)
	}
	for phase, c := range colours {
		if phase != "blocked" && c == colours["blocked"] {
			t.Errorf("blocked is drawn in %s's colour %s", phase, c)
		}
	}
	if !regexp.MustCompile(`#graph \.unit\.phase-settled\.blocked rect \{ fill: var\(--blocked\); \}`).MatchString(css) {
		t.Errorf("style.css does not fill settled blocked units with --blocked")
	}
	if !regexp.MustCompile(`\.sw\.blocked \{ background: var\(--blocked\); \}`).MatchString(css) ||
		!regexp.MustCompile(`<span><i class="sw blocked"></i>blocked[^<]*</span>`).MatchString(html) {
		t.Errorf("the legend has no blocked entry in the blocked colour")
	}
	if !strings.Contains(js, `us.status.state === 'blocked') cls.push('blocked')`) {
		t.Errorf("app.js does not mark blocked units")
	}
}
