package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// logWriter passes each line to t.Log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.t.Log(line)
	}
	return len(p), nil
}

// TestChaosShort is the bench's short version: a minute of faults, a few
// of each kind the machine allows, then every check.
func TestChaosShort(t *testing.T) {
	if testing.Short() {
		t.Skip("a minute of chaos on a three-node cluster; not in -short")
	}
	seed := uint64(time.Now().UnixNano())
	cfg := config{
		root:       t.TempDir(),
		duration:   time.Minute,
		writers:    2,
		readers:    2,
		writePause: 250 * time.Millisecond,
		readPause:  100 * time.Millisecond,
		gap:        2 * time.Second,
		hold:       3 * time.Second,
		diskMiB:    192,
		serverLog:  "warn",
		partition:  true,
		bound:      90 * time.Second,
		checkLimit: time.Minute,
		seed:       seed,
		out:        logWriter{t},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	res, checks, err := run(ctx, cfg)
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	var out strings.Builder
	report(&out, res, checks)
	t.Log(out.String())
	for kind, why := range res.Skipped {
		t.Logf("fault %s skipped: %s", kind, why)
	}
	if len(res.Failed) > 0 {
		t.Fatalf("seed %d: checks failed: %v", seed, res.Failed)
	}
	for _, kind := range []string{faultKillServer, faultKillAgent, faultPause, faultDisk, faultPartition, faultOtherBuild} {
		if _, skipped := res.Skipped[kind]; !skipped && res.Faults[kind] == 0 {
			t.Errorf("no %s fault in a minute: %v", kind, res.Faults)
		}
	}
	if res.Acked == 0 || res.Reads == 0 || res.HookRuns == 0 || res.WALEntries == 0 {
		t.Errorf("the run did too little to check anything: %+v", res)
	}
	if !res.Linearizable || res.Lost != 0 || res.RestartsFailed != 0 {
		t.Errorf("failed checks not listed as failed: %+v", res)
	}
}
