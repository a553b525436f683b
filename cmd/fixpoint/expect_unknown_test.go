package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCharmTestExpectsUnknown: a charm that never sets a status ends with
// Juju's "unknown", and charm test's expect: accepts it as a status to
// require.
func TestCharmTestExpectsUnknown(t *testing.T) {
	t.Parallel()
	env := filepath.Join(t.TempDir(), "quiet.cue")
	body := fmt.Sprintf(`apiVersion: "fixpoint/v1"
name: "quiet"
services: "quiet-source": {charm: %q, units: 1}
expect: "quiet-source": status: "unknown"
`, repo("testdata", "charms", "quiet-source"))
	if err := os.WriteFile(env, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	r := fixpoint(t, 3*time.Minute, "charm", "test", "-f", env, "--schedules", "1")
	if r.code != exitOK || !strings.Contains(r.stdout, "quiet-source/0  unknown") || !strings.Contains(r.stdout, "expectations met") {
		t.Fatalf("expect unknown: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
