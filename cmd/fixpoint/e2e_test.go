package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
)

// binPath is the fixpoint binary TestMain built for the end-to-end tests,
// binErr why it could not be built.
var (
	binPath string
	binErr  error
)

func fixpointBin(t *testing.T) string {
	t.Helper()
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// repo returns a path inside the repository root.
func repo(parts ...string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(append([]string{filepath.Dir(file), "..", ".."}, parts...)...)
}

type run struct {
	code           int
	stdout, stderr string
}

// fixpoint runs the binary to completion.
func fixpoint(t *testing.T, timeout time.Duration, args ...string) run {
	t.Helper()
	return runFixpoint(t, timeout, "", nil, args...)
}

// runFixpoint runs the binary to completion in dir ("" for here) with
// extra environment variables, and returns its exit code and output; it
// fails the test only when the binary could not run at all.
func runFixpoint(t *testing.T, timeout time.Duration, dir string, env []string, args ...string) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, fixpointBin(t), args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("fixpoint %v: %v", args, err)
	}
	return run{code, stdout.String(), stderr.String()}
}

func statusJSON(t *testing.T, dataDir string) *engine.Status {
	t.Helper()
	r := fixpoint(t, time.Minute, "status", "--format", "json", "--data-dir", dataDir)
	if r.code != 0 {
		t.Fatalf("status exited %d: %s", r.code, r.stderr)
	}
	var st engine.Status
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("status JSON: %v\n%s", err, r.stdout)
	}
	return &st
}

func TestDemoConvergesAndRerunIsANoop(t *testing.T) {
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

// upProc is an `up` running in the background.
type upProc struct {
	cmd  *exec.Cmd
	data string
	out  *bytes.Buffer
}

func startUp(t *testing.T, data string, flags ...string) *upProc {
	t.Helper()
	out := &bytes.Buffer{}
	args := append([]string{"up", "-f", repo("testdata", "demo", "env.cue"), "--data-dir", data}, flags...)
	cmd := exec.Command(fixpointBin(t), args...)
	cmd.Stdout, cmd.Stderr = out, out
	_ = os.Remove(filepath.Join(data, endpointFile))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &upProc{cmd: cmd, data: data, out: out}
	t.Cleanup(func() { p.kill() })
	return p
}

func (p *upProc) kill() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
}

func (p *upProc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		p.kill()
		t.Fatalf("up did not stop on SIGTERM:\n%s", p.out)
	}
}

// waitConverged polls status until the running up reports the fixed point.
func (p *upProc) waitConverged(t *testing.T) *engine.Status {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(p.data, endpointFile)); err == nil {
			r := fixpoint(t, time.Minute, "status", "--format", "json", "--data-dir", p.data)
			if r.code == 0 {
				var st engine.Status
				if err := json.Unmarshal([]byte(r.stdout), &st); err == nil && st.Converged {
					return &st
				}
			}
		}
		if p.cmd.ProcessState != nil {
			t.Fatalf("up exited early:\n%s", p.out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("up did not converge:\n%s", p.out)
	return nil
}

func TestStatusJSONAgainstRunningUp(t *testing.T) {
	data := t.TempDir()
	p := startUp(t, data)
	st := p.waitConverged(t)
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
	again := statusJSON(t, data)
	if !again.Converged || again.Index != st.Index {
		t.Errorf("status moved without a change: %d -> %d", st.Index, again.Index)
	}
	r := fixpoint(t, time.Minute, "debug", "universe", "web/0", "--data-dir", data)
	if r.code != 0 || !strings.Contains(r.stdout, `"allowed-units"`) {
		t.Errorf("debug universe: %d %s %s", r.code, r.stdout, r.stderr)
	}
	p.stop(t)
}

func TestFailingHooksPutTheUnitInError(t *testing.T) {
	cases := map[string]string{
		"fail-exit":     "exited with status 3: boom: cannot reach backend",
		"fail-json":     "stdout is not a result object",
		"fail-relation": `not in relation "nosuch:99"`,
		"fail-schema":   `status state must be "active", "blocked", "waiting", "maintenance" or "unknown"; got "happy"`,
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
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
	r := fixpoint(t, 5*time.Minute, "up", "-f", repo("testdata", "envs", "fail-timeout.cue"), "--data-dir", t.TempDir(), "--until-converged", "--timeout", "4m", "--hook-timeout", "2s")
	if r.code != exitUnitErr || !strings.Contains(r.stderr, "timed out after 2s") {
		t.Fatalf("up exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestUpTimeoutExitCode(t *testing.T) {
	r := fixpoint(t, 2*time.Minute, "up", "-f", repo("testdata", "envs", "fail-timeout.cue"), "--data-dir", t.TempDir(), "--until-converged", "--timeout", "3s")
	if r.code != exitTimeout || !strings.Contains(r.stderr, "no fixed point after 3s") {
		t.Fatalf("up exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
