package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// tickerCharm writes a classic charm whose update-status hook counts its
// runs in the unit's charm directory and says so in its status: the only
// way the status can move once the unit is settled is the timer.
func tickerCharm(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"metadata.yaml": "name: ticker\nsummary: counts its update-status runs\ndescription: a test charm\n",
		"hooks/start":   "#!/bin/sh\nset -e\nstatus-set active started\n",
		"hooks/update-status": `#!/bin/sh
set -e
n=$(cat "$CHARM_DIR/.ticks" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$CHARM_DIR/.ticks"
status-set active "update-status ran $n times"
`,
	}
	writeFiles(t, dir, files)
}

// TestUpdateStatusRunsOnATimer runs a classic charm with a 2 s
// update-status interval: its hook runs again and again on the settled
// unit, and the environment stays converged all along (a timer run is not
// a change), so `wait` returns at once.
func TestUpdateStatusRunsOnATimer(t *testing.T) {
	dir := t.TempDir()
	tickerCharm(t, filepath.Join(dir, "ticker"))
	env := filepath.Join(dir, "env.cue")
	if err := os.WriteFile(env, []byte("apiVersion: \"fixpoint/v1\"\nname: \"tick\"\nservices: ticker: {charm: \"./ticker\", units: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	up := startProc(t, "up", "-f", env, "--data-dir", data, "--update-status-interval", "2s")
	rafttest.Eventually(t, 2*time.Minute, "ticker converged", func() error {
		st := statusOf(t, data)
		if st == nil {
			return errors.New(up.out.String())
		}
		return holds(st.Converged, jsonString(st))
	})
	rafttest.Eventually(t, 2*time.Minute, "update-status ran twice, the environment converged throughout", func() error {
		st := statusOf(t, data)
		if st == nil {
			return errors.New(up.out.String())
		}
		if !st.Converged {
			t.Fatalf("a timer run made the environment unconverged: %s", jsonString(st))
		}
		u := st.Units["ticker/0"]
		return holds(u != nil && (strings.Contains(u.Status.Message, "ran 2 times") || strings.Contains(u.Status.Message, "ran 3 times")), jsonString(st))
	})
	if r := fixpoint(t, time.Minute, "wait", "--timeout", "30s", "--data-dir", data); r.code != 0 {
		t.Fatalf("wait after timer runs: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	st := statusOf(t, data)
	if u := st.Units["ticker/0"]; u == nil || u.Phase != "settled" {
		t.Fatalf("ticker/0 after timer runs: %s", jsonString(st))
	}
}
