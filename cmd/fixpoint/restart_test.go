package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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

// lockedBuffer is a bytes.Buffer a process writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// `fixpoint up ... & fixpoint wait` on a data dir a killed up left its
// address in: wait, started first, reads the dead address and waits
// (saying so) for the new up to publish its own, then follows it to the
// fixed point.
func TestWaitBesideARestartedUp(t *testing.T) {
	data := t.TempDir()
	first := startUp(t, data)
	first.waitConverged(t)
	first.kill()
	if _, err := os.Stat(filepath.Join(data, endpointFile)); err != nil {
		t.Fatalf("a killed up left no %s: %v", endpointFile, err)
	}

	var stdout, stderr lockedBuffer
	wait := exec.Command(fixpointBin(t), "wait", "--data-dir", data, "--timeout", "4m")
	wait.Stdout, wait.Stderr = &stdout, &stderr
	if err := wait.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- wait.Wait() }()
	t.Cleanup(func() {
		if wait.ProcessState == nil {
			_ = wait.Process.Kill()
			<-done
		}
	})
	eventually(t, "wait saying it waits for up", time.Minute, func() (bool, string) {
		select {
		case err := <-done:
			t.Fatalf("wait ended before up started: %v\n%s%s", err, stdout.String(), stderr.String())
		default:
		}
		return strings.Contains(stderr.String(), "waiting for fixpoint up on "+data+" to start"), stderr.String()
	})

	// The same as startUp, but leaving the dead address where it is.
	out := &bytes.Buffer{}
	up := exec.Command(fixpointBin(t), "up", "-f", repo("testdata", "demo", "env.cue"), "--data-dir", data)
	up.Stdout, up.Stderr = out, out
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	second := &upProc{cmd: up, data: data, out: out}
	t.Cleanup(second.kill)

	select {
	case err := <-done:
		if err != nil || !strings.Contains(stdout.String(), "converged at index") {
			t.Fatalf("wait: %v\nstdout:\n%s\nstderr:\n%s\nup:\n%s", err, stdout.String(), stderr.String(), out)
		}
	case <-time.After(5 * time.Minute):
		t.Fatalf("wait did not end:\n%s%s", stdout.String(), stderr.String())
	}
	second.stop(t)
}
