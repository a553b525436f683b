package main

import (
	"strings"
	"testing"
	"time"
)

// TestLimitFlagsAreTheClustersLimits: `up --max-units-per-service 1`
// records that limit in the replicated state, so the demo's two units per
// service are refused at their file:line:col; an `up` on the same data
// dir without the flag is held to the recorded limit, not to its own
// defaults; raising it with the flag lets the demo converge. A limit out
// of range is refused before anything starts.
func TestLimitFlagsAreTheClustersLimits(t *testing.T) {
	t.Parallel()
	env := repo("testdata", "demo", "env.cue")
	data := t.TempDir()
	for _, args := range [][]string{
		{"vet", env, "--max-units", "0"},
		{"up", "-f", env, "--data-dir", t.TempDir(), "--max-relations", "1000000001"},
	} {
		r := fixpoint(t, time.Minute, args...)
		if r.code != exitFailed || !strings.Contains(r.stderr, "it must be between 1 and") {
			t.Errorf("%v: exit %d, %s; want 1 naming the range", args, r.code, r.stderr)
		}
	}
	r := fixpoint(t, time.Minute, "vet", env, "--max-units-per-service", "1")
	if r.code != exitFailed || !strings.Contains(r.stderr, "env.cue:4:") || !strings.Contains(r.stderr, "services.db.units: units is 2; the limit per service is 1") {
		t.Errorf("vet with --max-units-per-service 1: exit %d\n%s", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"--max-units-per-service", "1"},
		{}, // the recorded limit holds, not this run's default
	} {
		r := fixpoint(t, 2*time.Minute, append([]string{"up", "-f", env, "--data-dir", data, "--until-converged", "--timeout", "1m"}, args...)...)
		if r.code != exitFailed || !strings.Contains(r.stderr, "env.cue:4:") || !strings.Contains(r.stderr, "services.db.units: units is 2; the limit per service is 1 (raise it with --max-units-per-service") {
			t.Fatalf("up %v over a limit of 1 unit per service: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
		}
	}
	r = fixpoint(t, 5*time.Minute, "up", "-f", env, "--data-dir", data, "--until-converged", "--timeout", "4m", "--max-units-per-service", "2")
	if r.code != exitOK || !strings.Contains(r.stdout, "converged at index") {
		t.Fatalf("up with the limit raised to 2: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
