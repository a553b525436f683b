package main

import (
	"strings"
	"testing"
	"time"
)

// TestMemoryLimitFlag: `up` and `server` take --memory-limit; a value
// that is not a size, or is below the smallest limit, is refused before
// anything starts, with an error naming the flag and how to write a size.
func TestMemoryLimitFlag(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"up", "server"} {
		r := fixpoint(t, time.Minute, cmd, "--help")
		if r.code != exitOK || !strings.Contains(r.stdout, "--memory-limit") || !strings.Contains(r.stdout, "GOMEMLIMIT") {
			t.Errorf("%s --help: exit %d, no --memory-limit:\n%s", cmd, r.code, r.stdout)
		}
	}
	env := repo("testdata", "demo", "env.cue")
	for bad, says := range map[string]string{
		"4 gigs": "not a size: write a number of bytes with a unit, e.g. 4GiB",
		"1MiB":   "below the smallest limit, 64.0 MiB",
	} {
		r := fixpoint(t, time.Minute, "up", "-f", env, "--data-dir", t.TempDir(), "--memory-limit", bad)
		if r.code != exitFailed || !strings.Contains(r.stderr, "--memory-limit") || !strings.Contains(r.stderr, says) {
			t.Errorf("up --memory-limit %q: exit %d, %s; want 1 saying %q", bad, r.code, r.stderr, says)
		}
	}
}
