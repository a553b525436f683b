package hooksh

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkLoadRun measures fixpoint-sh's work on one classic-db hook
// besides the process start: Load (parse and check the hook and the
// library it sources) and Run (the interpreter sourcing the library). The
// hook is the library sourced and `:`, so that no hook tool (which needs
// the agent's socket) and no other process runs.
//
//	go test ./engine/legacy/hooksh -run XXX -bench LoadRun -cpuprofile cpu.out
func BenchmarkLoadRun(b *testing.B) {
	charm, err := filepath.Abs(filepath.Join("..", "..", "..", "testdata", "charms", "classic-db"))
	if err != nil {
		b.Fatal(err)
	}
	hook := filepath.Join(b.TempDir(), "install")
	src := "#!/bin/sh\nset -e\n. \"$CHARM_DIR/lib/classic-db.sh\"\n:\n"
	if err := os.WriteFile(hook, []byte(src), 0o755); err != nil {
		b.Fatal(err)
	}
	env := []string{"CHARM_DIR=" + charm, "PATH=" + os.Getenv("PATH"), "JUJU_HOOK_NAME=install"}
	tools := b.TempDir()
	for b.Loop() {
		f, opts, reason := Load(hook, env)
		if reason != "" {
			b.Fatal(reason)
		}
		var stderr strings.Builder
		if code := Run(context.Background(), f, opts, tools, nil, env, strings.NewReader(""), io.Discard, &stderr); code != 0 {
			b.Fatalf("exit %d: %s", code, stderr.String())
		}
	}
}
