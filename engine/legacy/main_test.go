package legacy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// toolBinary is cmd/fixpoint-hook built once for the package: the program
// the hook tool symlinks point at. fallbackBinary is testtool, a stand-in
// for the fixpoint binary, which is every tool too (the fallback when no
// fixpoint-hook is at hand). shellBinary is cmd/fixpoint-sh.
var toolBinary, fallbackBinary, shellBinary string

func TestMain(m *testing.M) {
	os.Exit(buildToolAndRun(m))
}

func buildToolAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "legacy-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "legacy tests:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	toolBinary = filepath.Join(dir, "fixpoint-hook")
	fallbackBinary = filepath.Join(dir, "testtool")
	shellBinary = filepath.Join(dir, "fixpoint-sh")
	build := exec.Command(goCommand(), "build", "-o", dir, "./testtool", "../../cmd/fixpoint-hook", "../../cmd/fixpoint-sh")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "legacy tests: build the hook tools:", err)
		return 1
	}
	return m.Run()
}

func goCommand() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}
