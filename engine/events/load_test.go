package events

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseUniverseErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"syntax", "{\n  \"unit\": \"web/0\",\n  \"leader\": tru\n}", "3:16: invalid JSON"},
		{"type", "{\n  \"unit\": \"web/0\",\n  \"leader\": \"yes\"\n}", `3:18: field "leader": want bool, got JSON string`},
		{"truncated", "{\n  \"unit\": \"web/0\",", "2:19: invalid JSON: unexpected end of file"},
		{"empty", "  \n", "empty file"},
		{"trailing", `{"unit": "web/0"} {}`, "1:19: unexpected data"},
		{"api", `{"api": "fixpoint/v0", "unit": "web/0"}`, `api is "fixpoint/v0"`},
		{"not a universe", `{"units": 3}`, `no "unit"`},
	}
	for _, tt := range tests {
		_, err := ParseUniverse([]byte(tt.data))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v; want it to contain %q", tt.name, err, tt.want)
		}
	}
}

func TestReadUniverseNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{\"unit\": 3}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadUniverse(bad); err == nil || !strings.Contains(err.Error(), bad+": 1:") {
		t.Errorf("error %v; want it to name %s and a position", err, bad)
	}
	missing := filepath.Join(dir, "missing.json")
	if _, err := ReadUniverse(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("error %v; want it to name %s", err, missing)
	}
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, []byte(`{"api":"fixpoint/v1","unit":"web/0","relations":[{"ident":"db:3","id":3,"name":"db","units":{"db/0":{"a":"1"}}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := ReadUniverse(good)
	if err != nil {
		t.Fatal(err)
	}
	s, err := FromUniverse(u)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(lines(Derive(nil, s)), ",")
	want := "install,db-relation-created db:3,leader-settings-changed,config-changed,start,db-relation-joined db:3 db/0,db-relation-changed db:3 db/0"
	if got != want {
		t.Errorf("Derive(nil, good) = %s; want %s", got, want)
	}
}
