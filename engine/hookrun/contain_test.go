package hookrun

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// eachContainment runs f once per way of containing hooks this machine
// offers: the subreaper supervisor always, a cgroup v2 per run where the
// test may make cgroups.
func eachContainment(t *testing.T, f func(t *testing.T)) {
	cases := []struct {
		name string
		c    container
	}{{"subreaper", subreaper{}}}
	if c, err := detectCgroup(); err == nil {
		cases = append(cases, struct {
			name string
			c    container
		}{"cgroup", c})
	} else {
		t.Logf("no writable cgroup v2 here (%v): only the subreaper is tested", err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			saved := containment
			containment = func() container { return tc.c }
			defer func() { containment = saved }()
			f(t)
		})
	}
}

// escapee is a hook fragment that starts a process in a session of its
// own, as `setsid sleep 900 &` does, which holds the hook's stdout open,
// and waits until that process has written its pid to $1.
func escapee(pidFile string) string {
	return `setsid sh -c 'echo $$ > ` + pidFile + `.tmp && mv ` + pidFile + `.tmp ` + pidFile + `; exec sleep 900' &
until [ -s ` + pidFile + ` ]; do sleep 0.01; done
`
}

// readPid reads a pid a hook wrote.
func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the hook wrote no pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// assertGone fails unless pid has ended (a zombie waiting for its reaper
// has ended). It looks once: containment returns only after the run's
// processes are gone.
func assertGone(t *testing.T, pid int, what string) {
	t.Helper()
	if _, _, err := stat(pid); err == nil && !zombie(pid) {
		_ = exec.Command("kill", "-9", strconv.Itoa(pid)).Run()
		t.Fatalf("%s (pid %d) still runs", what, pid)
	}
}

func TestEscapedProcessDoesNotHoldTheRunAndIsEnded(t *testing.T) {
	eachContainment(t, func(t *testing.T) {
		dir := t.TempDir()
		pidFile := filepath.Join(dir, "sleeper.pid")
		hook := script(t, escapee(pidFile)+`echo '{"status":{"status":"active"}}'`)
		// The timeout is far away: the run must end when the hook exits,
		// not when the sleeper that inherited its stdout does.
		out, err := Run(context.Background(), Spec{Path: hook, Dir: dir, Timeout: 10 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(out.Stdout)); got != `{"status":{"status":"active"}}` {
			t.Errorf("stdout %q", got)
		}
		assertGone(t, readPid(t, pidFile), "the hook's setsid sleeper")
	})
}

func TestTimeoutKillsTheWholeTree(t *testing.T) {
	eachContainment(t, func(t *testing.T) {
		// The timeout must strike after the hook has started its sleeper:
		// on a loaded machine a short one may strike first, so it grows
		// until the hook got that far.
		for timeout := 500 * time.Millisecond; ; timeout *= 4 {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "sleeper.pid")
			hook := script(t, escapee(pidFile)+"echo $$ > "+dir+"/hook.pid.tmp && mv "+dir+"/hook.pid.tmp "+dir+"/hook.pid; sleep 900")
			_, err := Run(context.Background(), Spec{Path: hook, Dir: dir, Timeout: timeout})
			if err == nil || !strings.Contains(err.Error(), "timed out after "+timeout.String()) {
				t.Fatalf("err = %v", err)
			}
			if _, err := os.Stat(dir + "/hook.pid"); err != nil && timeout < time.Minute {
				continue
			}
			assertGone(t, readPid(t, pidFile), "the hook's setsid sleeper")
			assertGone(t, readPid(t, dir+"/hook.pid"), "the hook")
			return
		}
	})
}

func TestCancelEndsTheWholeTree(t *testing.T) {
	eachContainment(t, func(t *testing.T) {
		dir := t.TempDir()
		pidFile := filepath.Join(dir, "sleeper.pid")
		hook := script(t, escapee(pidFile)+"touch "+dir+"/ready; sleep 900")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := Run(ctx, Spec{Path: hook, Dir: dir, Timeout: 10 * time.Minute})
			done <- err
		}()
		waitFile(t, dir+"/ready", done)
		cancel()
		if err := <-done; err == nil || !strings.Contains(err.Error(), "was cancelled") {
			t.Fatalf("err = %v", err)
		}
		assertGone(t, readPid(t, pidFile), "the hook's setsid sleeper")
	})
}

func TestMissingExecutableUnderEachContainment(t *testing.T) {
	eachContainment(t, func(t *testing.T) {
		_, err := Run(context.Background(), Spec{Path: filepath.Join(t.TempDir(), "nope"), Dir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "could not start") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestExitStatusUnderEachContainment(t *testing.T) {
	eachContainment(t, func(t *testing.T) {
		_, err := Run(context.Background(), Spec{Path: script(t, "echo bad >&2; exit 7"), Dir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "exited with status 7: bad") {
			t.Fatalf("err = %v", err)
		}
		_, err = Run(context.Background(), Spec{Path: script(t, "kill -9 $$"), Dir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "was killed by killed") {
			t.Fatalf("err = %v", err)
		}
	})
}

// waitFile waits until a hook has made path; the hook has its own
// timeout, so the wait is bounded by the run, not by a guess.
func waitFile(t *testing.T, path string, done <-chan error) {
	t.Helper()
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case err := <-done:
			t.Fatalf("the run ended before %s appeared: %v", path, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
