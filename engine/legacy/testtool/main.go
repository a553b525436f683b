// Command testtool is a stand-in for the fixpoint binary in the legacy
// package's tests: invoked under a hook tool's name it is that tool.
package main

import (
	"os"
	"path/filepath"

	"github.com/fixpoint/fixpoint/engine/legacy"
)

func main() {
	os.Exit(legacy.ToolMain(filepath.Base(os.Args[0]), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
