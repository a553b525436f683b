package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// An up starting while a `wait` beside it probes the lock (upRunning
// holds it shared for an instant) takes the lock, not "in use".
func TestUpLockOutlastsAProbe(t *testing.T) {
	data := t.TempDir()
	f, err := os.OpenFile(filepath.Join(data, upLockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	// The probe lets go while lockDataDir tries.
	release := time.AfterFunc(100*time.Millisecond, func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) })
	defer release.Stop()
	l, err := lockDataDir(data)
	if err != nil {
		t.Fatalf("lock while a probe held it for an instant: %v", err)
	}
	l.release()
}

// `fixpoint up ... & fixpoint wait` on a data dir a killed up left its
// address in: wait, started first, reads the dead address and waits
// (saying so) for the new up to publish its own, then follows it to the
// fixed point.
func TestWaitBesideARestartedUp(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	first := startUp(t, data, demoEnv)
	first.waitConverged(t, converges)
	first.kill()
	if _, err := os.Stat(filepath.Join(data, endpointFile)); err != nil {
		t.Fatalf("a killed up left no %s: %v", endpointFile, err)
	}

	wait := startProc(t, "wait", "--data-dir", data, "--timeout", "4m")
	rafttest.Eventually(t, time.Minute, "wait saying it waits for up", func() error {
		if wait.exited() {
			t.Fatalf("wait ended before up started:\n%s", wait.out)
		}
		return holds(strings.Contains(wait.out.String(), "waiting for fixpoint up on "+data+" to start"), wait.out.String())
	})

	// The same as startUp, but leaving the dead address where it is.
	second := startProc(t, "up", "-f", demoEnv, "--data-dir", data)
	select {
	case <-wait.done:
		if code := wait.cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(wait.out.String(), "converged at index") {
			t.Fatalf("wait exited %d:\n%s\nup:\n%s", code, wait.out, second.out)
		}
	case <-time.After(5 * time.Minute):
		t.Fatalf("wait did not end:\n%s", wait.out)
	}
	second.stop(t)
}
