package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
)

func TestDemoConvergesAndRerunIsANoop(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	r := fixpoint(t, 5*time.Minute, "up", "-f", repo("testdata", "demo", "env.cue"), "--data-dir", data, "--until-converged", "--timeout", "4m")
	if r.code != 0 {
		t.Fatalf("up exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"converged at index", "web/0", "web/1", "db/0*", "settled", "connected to", "/ui/ (it asks for the token in " + filepath.Join(data, operatorTokenFile) + "; it closes when up exits at the fixed point"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("up output lacks %q:\n%s", want, r.stdout)
		}
	}
	// The web units were configured with the db's address and credentials.
	for _, unit := range []string{"web-0", "web-1"} {
		conf, err := os.ReadFile(filepath.Join(data, "agent", "units", unit, "web.conf"))
		if err != nil {
			t.Fatalf("%s has no web.conf: %v", unit, err)
		}
		for _, key := range []string{"host=127.0.0.1", "user=web", "password=", "database=shop"} {
			if !bytes.Contains(conf, []byte(key)) {
				t.Errorf("%s web.conf lacks %q:\n%s", unit, key, conf)
			}
		}
	}
	// Running up again on the same data dir runs no hook.
	before := unitLines(r.stdout)
	if len(before) != 4 {
		t.Fatalf("status table rows: %q", before)
	}
	r = fixpoint(t, 5*time.Minute, "up", "-f", repo("testdata", "demo", "env.cue"), "--data-dir", data, "--until-converged", "--timeout", "2m")
	if r.code != 0 {
		t.Fatalf("second up exited %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "environment unchanged") {
		t.Errorf("second up did not find the environment unchanged:\n%s", r.stdout)
	}
	if after := unitLines(r.stdout); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Fatalf("second up ran hooks; units before:\n%s\nafter:\n%s", strings.Join(before, "\n"), strings.Join(after, "\n"))
	}
}

// unitLines returns the unit rows of the status table up printed last,
// reconcile counts included and the SINCE column (which moves with the
// clock) left out.
func unitLines(out string) []string {
	i := strings.LastIndex(out, "UNIT")
	var lines []string
	for _, l := range strings.Split(out[i:], "\n")[1:] {
		if f := strings.Fields(l); strings.HasPrefix(l, "  ") && len(f) > 3 {
			lines = append(lines, strings.Join(append(f[:3:3], f[4:]...), " "))
		}
	}
	return lines
}

func TestStatusJSONAgainstRunningUp(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	p := startUp(t, data, demoEnv)
	st := p.waitConverged(t, converges)
	if len(st.Units) != 4 || st.Index == 0 {
		t.Fatalf("status: %+v", st)
	}
	leaders := 0
	for n, u := range st.Units {
		if u.Phase != engine.Settled || u.Reconciles == 0 || u.Machine != "local" {
			t.Errorf("%s: %+v", n, u)
		}
		if u.Leader {
			leaders++
		}
	}
	if leaders != 2 {
		t.Errorf("%d leaders, want one per service", leaders)
	}
	// Log lines shipped after the fixed point take entries of their own,
	// so the index may move; no unit may run again or change phase.
	again := statusJSON(t, data)
	if !again.Converged || again.Index < st.Index {
		t.Errorf("status went back or unconverged without a change: %d -> %d", st.Index, again.Index)
	}
	for n, u := range st.Units {
		if a := again.Units[n]; a == nil || a.Reconciles != u.Reconciles || a.Phase != u.Phase {
			t.Errorf("%s moved without a change: %+v -> %+v", n, u, a)
		}
	}
	r := fixpoint(t, time.Minute, "debug", "universe", "web/0", "--data-dir", data)
	if r.code != 0 || !strings.Contains(r.stdout, `"allowed-units"`) {
		t.Errorf("debug universe: %d %s %s", r.code, r.stdout, r.stderr)
	}
	p.stop(t)
}

func TestFailingHooksPutTheUnitInError(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"fail-exit":     "exited with status 3: boom: cannot reach backend",
		"fail-json":     "stdout is not a result object",
		"fail-relation": `not in relation "nosuch:99"`,
		"fail-schema":   `status state must be "active", "blocked", "waiting", "maintenance" or "unknown"; got "happy"`,
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := fixpoint(t, 5*time.Minute, "up", "-f", repo("testdata", "envs", name+".cue"), "--data-dir", t.TempDir(), "--until-converged", "--timeout", "4m")
			if r.code != exitUnitErr {
				t.Fatalf("up exited %d, want %d\n%s\n%s", r.code, exitUnitErr, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, "unit "+name+"/0 is in error") || !strings.Contains(r.stderr, want) {
				t.Fatalf("stderr does not name the unit and cause %q:\n%s", want, r.stderr)
			}
		})
	}
}

func TestHookTimeoutIsAnError(t *testing.T) {
	t.Parallel()
	r := fixpoint(t, 5*time.Minute, "up", "-f", repo("testdata", "envs", "fail-timeout.cue"), "--data-dir", t.TempDir(), "--until-converged", "--timeout", "4m", "--hook-timeout", "2s")
	if r.code != exitUnitErr || !strings.Contains(r.stderr, "timed out after 2s") {
		t.Fatalf("up exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestUpTimeoutExitCode(t *testing.T) {
	t.Parallel()
	r := fixpoint(t, 2*time.Minute, "up", "-f", repo("testdata", "envs", "fail-timeout.cue"), "--data-dir", t.TempDir(), "--until-converged", "--timeout", "3s")
	if r.code != exitTimeout || !strings.Contains(r.stderr, "no fixed point after 3s") {
		t.Fatalf("up exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
