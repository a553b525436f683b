package hookrun

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func script(t *testing.T, body string) string {
	t.Helper()
	return scriptIn(t, t.TempDir(), body)
}

// scriptIn writes a POSIX sh hook with body into dir.
func scriptIn(tb testing.TB, dir, body string) string {
	tb.Helper()
	path := filepath.Join(dir, "hook")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		tb.Fatal(err)
	}
	return path
}

func TestInputOnStdinAndInFile(t *testing.T) {
	hook := script(t, `cat; printf ' '; cat "$FIXPOINT_UNIVERSE"; printf ' %s' "$UNIT"`)
	out, err := Run(context.Background(), Spec{Path: hook, Dir: t.TempDir(), Input: []byte(`{"a":1}`), InputEnv: "FIXPOINT_UNIVERSE", Env: []string{"UNIT=web/0"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out.Stdout); got != `{"a":1} {"a":1} web/0` {
		t.Fatalf("stdout %q", got)
	}
}

func TestExitStatusNamesTheHookAndStderr(t *testing.T) {
	hook := script(t, "echo warming up >&2; echo 'boom: no backend' >&2; exit 3")
	_, err := Run(context.Background(), Spec{Path: hook, Dir: t.TempDir()})
	var he *Error
	if !errors.As(err, &he) || !strings.Contains(err.Error(), "exited with status 3: boom: no backend") {
		t.Fatalf("err = %v", err)
	}
}

func TestTimeoutKillsTheWholeProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	// The hook starts a grandchild that would outlive it.
	hook := script(t, "sleep 600 & echo $! > "+pidFile+"; wait")
	_, err := Run(context.Background(), Spec{Path: hook, Dir: dir, Timeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "timed out after 300ms") {
		t.Fatalf("err = %v", err)
	}
	data, rerr := os.ReadFile(pidFile)
	if rerr != nil {
		t.Fatal(rerr)
	}
	proc := "/proc/" + strings.TrimSpace(string(data))
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := os.ReadFile(proc + "/stat")
		if err != nil || strings.Contains(string(st), ") Z ") {
			return // gone, or a zombie waiting for init
		}
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %s survived the timeout", proc)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestOutputIsCapped(t *testing.T) {
	hook := script(t, "head -c 5000 /dev/zero")
	_, err := Run(context.Background(), Spec{Path: hook, Dir: t.TempDir(), MaxOutput: 1000})
	if err == nil || !strings.Contains(err.Error(), "more than 1000 bytes") {
		t.Fatalf("err = %v", err)
	}
}

func TestMissingExecutable(t *testing.T) {
	_, err := Run(context.Background(), Spec{Path: filepath.Join(t.TempDir(), "nope"), Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "could not start") {
		t.Fatalf("err = %v", err)
	}
}
