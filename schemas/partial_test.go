package schemas

import (
	"slices"
	"testing"
)

func TestParsePathReadsFormatPath(t *testing.T) {
	for _, path := range [][]string{{"services", "web", "units"}, {"relations", "web-db", "0"}, {"services", "a.b", "config", `q"x`}, {"name"}} {
		got, ok := parsePath(FormatPath(path))
		if !ok || !slices.Equal(got, path) {
			t.Errorf("parsePath(%q) = %q, %v; want %q", FormatPath(path), got, ok, path)
		}
	}
	for _, bad := range []string{`"unterminated`, `"a"b`} {
		if _, ok := parsePath(bad); ok {
			t.Errorf("parsePath(%q) accepted", bad)
		}
	}
}

func TestLeaveOut(t *testing.T) {
	m := map[string]any{"services": map[string]any{"web": map[string]any{"units": "3", "placement": []any{1}, "charm": "./web"}}}
	leaveOut(m, []string{"services", "web", "units"})
	leaveOut(m, []string{"services", "web", "placement", "0"})
	leaveOut(m, []string{"services", "db", "charm"})
	web := m["services"].(map[string]any)["web"].(map[string]any)
	if len(web) != 1 || web["charm"] != "./web" {
		t.Errorf("left %v, want only the charm", web)
	}
}
