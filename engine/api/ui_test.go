package api

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// TestDashboardColoursBlockedUnitsApart: a settled unit whose workload
// says blocked is drawn hatched in a colour of its own, not the settled
// green, and the filter names it. (cmd/fixpoint's headless-browser test
// checks the drawn page.)
func TestDashboardColoursBlockedUnitsApart(t *testing.T) {
	css, html, js := uiFile(t, "style.css"), uiFile(t, "index.html"), uiFile(t, "graph.js")
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
	if !strings.Contains(css, `#graph .unit.blocked rect, #graph .seg.kind-blocked rect { fill: url(#hatch); }`) {
		t.Errorf("style.css does not fill blocked units with the hatch")
	}
	if !regexp.MustCompile(`<pattern id="hatch"[^>]*>\s*<rect [^>]*fill="` + colours["blocked"] + `"`).MatchString(html) {
		t.Errorf("the hatch is not in the blocked colour %s", colours["blocked"])
	}
	if !regexp.MustCompile(`<button type="button" data-kind="blocked"[^>]*><i class="sw blocked"></i>blocked</button>`).MatchString(html) {
		t.Errorf("the filter has no blocked entry with the blocked swatch")
	}
	if !strings.Contains(js, `us.status.state === 'blocked') cls.push('blocked')`) {
		t.Errorf("graph.js does not mark blocked units")
	}
}

// TestDashboardIsSelfContained: the page loads every script it ships
// and nothing from elsewhere (it is served offline).
func TestDashboardIsSelfContained(t *testing.T) {
	html := uiFile(t, "index.html")
	files, err := fs.Glob(uiFiles, "ui/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimPrefix(f, "ui/")
		if strings.HasSuffix(name, ".js") && !strings.Contains(html, `<script src="`+name+`"></script>`) {
			t.Errorf("index.html does not load %s", name)
		}
		body := uiFile(t, name)
		for _, m := range regexp.MustCompile(`(?:src|href|url\()\s*=?\s*["']?(https?:)?//[^"')\s]+`).FindAllString(body, -1) {
			t.Errorf("%s loads %s from elsewhere", name, m)
		}
		if strings.Contains(body, "@import") || strings.Contains(body, "import(") {
			t.Errorf("%s imports something", name)
		}
	}
}

func uiFile(t *testing.T, name string) string {
	t.Helper()
	data, err := uiFiles.ReadFile("ui/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
