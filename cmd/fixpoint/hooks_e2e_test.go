package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// alive says whether pid runs (a zombie waiting for its reaper does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || !strings.HasPrefix(s[i+1:], " Z")
}

// waitPid waits until a hook has written a pid other than not to path.
func waitPid(t *testing.T, p *upProc, path string, not int) int {
	t.Helper()
	pid := 0
	rafttest.Eventually(t, 3*time.Minute, "a hook writing "+path, func() error {
		if p.exited() {
			t.Fatalf("up exited early:\n%s", p.out)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if pid, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil || pid == not {
			return fmt.Errorf("pid %q, want one other than %d", b, not)
		}
		return nil
	})
	return pid
}

// startUpRunning starts `up -f env` on data without waiting for a fixed
// point (hang's hook never lets it converge), with secrets of the
// operator's and the agent's own in its environment: no hook may see them.
func startUpRunning(t *testing.T, data, env string) *upProc {
	t.Helper()
	secrets := []string{"FIXPOINT_TOKEN=agent-secret-token", "SECRET_X=operator-secret"}
	return &upProc{start(t, t, secrets, fixpointBin(t), "up", "-f", env, "--data-dir", data), data}
}

// Issue 14, items 2 and 5: an agent started with FIXPOINT_TOKEN and
// SECRET_X in its environment runs a hook that sees neither; an agent SIGKILLed mid-hook, then restarted, ends the
// hook it left (and what that hook started in a session of its own) before
// it runs the unit again; and the hook of a unit that is removed is ended
// at once, not at its timeout.
func TestHooksOfKilledAgentsAndRemovedUnitsAreEnded(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	unitDir := filepath.Join(data, "agent", "units", "hang-0")
	var pids []int
	t.Cleanup(func() {
		for _, pid := range pids {
			if alive(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})

	first := startUpRunning(t, data, repo("testdata", "envs", "hang.cue"))
	hook1 := waitPid(t, first, filepath.Join(unitDir, "hook.pid"), 0)
	sleeper1 := waitPid(t, first, filepath.Join(unitDir, "sleeper.pid"), 0)
	pids = append(pids, hook1, sleeper1)
	env, err := os.ReadFile(filepath.Join(unitDir, "env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"FIXPOINT_TOKEN", "agent-secret-token", "SECRET_X", "operator-secret"} {
		if strings.Contains(string(env), secret) {
			t.Errorf("the hook's environment holds %s:\n%s", secret, env)
		}
	}
	if !strings.Contains(string(env), "FIXPOINT_UNIT=hang/0") {
		t.Errorf("the hook's environment lacks FIXPOINT_UNIT:\n%s", env)
	}
	first.kill() // SIGKILL, mid-hook

	second := startUpRunning(t, data, repo("testdata", "envs", "hang.cue"))
	hook2 := waitPid(t, second, filepath.Join(unitDir, "hook.pid"), hook1)
	sleeper2 := waitPid(t, second, filepath.Join(unitDir, "sleeper.pid"), sleeper1)
	pids = append(pids, hook2, sleeper2)
	// The new run looked, as it started, for processes of the old one.
	if b, err := os.ReadFile(filepath.Join(unitDir, "overlaps")); err == nil {
		t.Fatalf("hang/0 ran twice at once after the agent's restart:\n%s", b)
	}
	for _, pid := range []int{hook1, sleeper1} {
		if alive(pid) {
			t.Fatalf("pid %d of the killed agent's run still runs", pid)
		}
	}

	r := fixpoint(t, 4*time.Minute, "apply", "-f", repo("testdata", "envs", "hang-removed.cue"), "--yes", "--wait", "--timeout", "3m", "--data-dir", data)
	if r.code != exitOK {
		t.Fatalf("apply exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// The hook timeout is 5 minutes; the agent hears of the removal with
	// its next heartbeat (every 5 s).
	rafttest.Eventually(t, time.Minute, "the removed unit's hook and its setsid sleeper ended", func() error {
		return holds(!alive(hook2) && !alive(sleeper2), fmt.Sprintf("hook (pid %d) alive %v, sleeper (pid %d) alive %v\n%s", hook2, alive(hook2), sleeper2, alive(sleeper2), second.out))
	})
	second.stop(t)
}
