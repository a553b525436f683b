package legacy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// toolBinary is testtool built once for the package: the fixpoint binary's
// stand-in that the hook tool symlinks point at.
var toolBinary string

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
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	toolBinary = filepath.Join(dir, "toolbin")
	build := exec.Command(goTool, "build", "-o", toolBinary, "./testtool")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "legacy tests: build testtool:", err)
		return 1
	}
	return m.Run()
}
