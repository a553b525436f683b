package hookrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestMain lets the test binary play an agent that another test kills.
func TestMain(m *testing.M) {
	if spec := os.Getenv("HOOKRUN_TEST_AGENT"); spec != "" {
		os.Exit(fakeAgent(spec))
	}
	os.Exit(m.Run())
}

// fakeAgent does what an agent does for one unit: take its lock, run its
// hook tracked by the lock. The hook never finishes; the test SIGKILLs
// this process mid-hook.
func fakeAgent(spec string) int {
	dataDir, hook := filepath.Dir(spec), spec
	lock, err := LockUnit(context.Background(), dataDir, "web/0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer lock.Unlock()
	_, err = Run(context.Background(), Spec{Path: hook, Dir: dataDir, Timeout: 10 * time.Minute, Track: lock})
	fmt.Fprintln(os.Stderr, "the hook ended:", err)
	return 1
}

// An agent SIGKILLed mid-hook leaves the hook and what it started running.
// The restarted agent does not run that unit's hook while they do: taking
// the unit's lock ends them first.
func TestRestartedAgentEndsTheDeadAgentsRunFirst(t *testing.T) {
	for _, mode := range []string{"subreaper", "detected"} {
		t.Run(mode, func(t *testing.T) {
			dataDir := t.TempDir()
			pidFile := filepath.Join(dataDir, "sleeper.pid")
			hook := filepath.Join(dataDir, "hook")
			body := "#!/bin/sh\n" + escapee(pidFile) + "echo $$ > " + dataDir + "/hook.pid.tmp && mv " + dataDir + "/hook.pid.tmp " + dataDir + "/hook.pid\nsleep 900\n"
			if err := os.WriteFile(hook, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			agent := exec.Command(os.Args[0], "-test.run=^$")
			agent.Env = append(os.Environ(), "HOOKRUN_TEST_AGENT="+hook, "FIXPOINT_HOOK_CONTAINMENT="+mode)
			agent.Stderr = os.Stderr
			if err := agent.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- agent.Wait() }()
			waitFile(t, dataDir+"/hook.pid", exited)
			hookPid, sleeperPid := readPid(t, dataDir+"/hook.pid"), readPid(t, pidFile)
			if err := agent.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-exited
			t.Cleanup(func() { killIfRunning(hookPid); killIfRunning(sleeperPid) })

			lock, err := LockUnit(context.Background(), dataDir, "web/0")
			if err != nil {
				t.Fatal(err)
			}
			defer lock.Unlock()
			assertGone(t, hookPid, "the dead agent's hook")
			assertGone(t, sleeperPid, "the dead agent's hook's setsid sleeper")
		})
	}
}

// Two agents on one data dir (or one agent's two goroutines) never run
// one unit at once: the second waits for the lock.
func TestUnitLockIsExclusive(t *testing.T) {
	dataDir := t.TempDir()
	first, err := LockUnit(context.Background(), dataDir, "web/0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := LockUnit(ctx, dataDir, "web/0"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock of web/0: %v; want it to wait until ctx ends", err)
	}
	other, err := LockUnit(context.Background(), dataDir, "web/1")
	if err != nil {
		t.Fatalf("another unit's lock: %v", err)
	}
	other.Unlock()
	first.Unlock()
	again, err := LockUnit(context.Background(), dataDir, "web/0")
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	again.Unlock()
	if _, err := LockUnit(context.Background(), dataDir, "../x"); err == nil {
		t.Fatal("a unit name with .. was taken")
	}
}

// EndLeftovers, run by an agent on start, ends the runs a dead agent left
// for units nobody holds, removed units included.
func TestEndLeftoversEndsUnheldRuns(t *testing.T) {
	eachContainment(t, func(t *testing.T) {
		dataDir := t.TempDir()
		lock, err := LockUnit(context.Background(), dataDir, "gone/0")
		if err != nil {
			t.Fatal(err)
		}
		pidFile := filepath.Join(dataDir, "sleeper.pid")
		hook := script(t, escapee(pidFile)+"touch "+dataDir+"/ready; sleep 900")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cmd := exec.Command(hook)
		proc, err := Start(cmd, lock)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { _, err := proc.Wait(ctx); done <- err }()
		waitFile(t, dataDir+"/ready", done)
		sleeper := readPid(t, pidFile)
		t.Cleanup(func() { killIfRunning(sleeper) })
		// The lock is dropped as a dead agent's would be; its run goes on.
		lock.Unlock()
		if err := EndLeftovers(dataDir); err != nil {
			t.Fatal(err)
		}
		assertGone(t, sleeper, "the left run's setsid sleeper")
		cancel()
		<-done
	})
}

func killIfRunning(pid int) {
	if _, _, err := stat(pid); err == nil {
		_ = exec.Command("kill", "-9", fmt.Sprint(pid)).Run()
	}
}
