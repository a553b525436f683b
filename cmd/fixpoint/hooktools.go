package main

import (
	"os"

	"github.com/fixpoint/fixpoint/engine/legacy"
)

// isHookTool reports whether the binary was invoked under a Juju hook
// tool's name (relation-get, config-get, ...). The agent links the tools to
// cmd/fixpoint-hook, a small program that starts several times faster; it
// links them to this binary only where that program is not installed and
// cannot be built (no Go toolchain), and says so in its log.
func isHookTool(name string) bool { return legacy.IsTool(name) }

// hookToolMain runs the hook tool called name and returns its exit code.
func hookToolMain(name string, args []string) int {
	return legacy.ToolMain(name, args, os.Stdin, os.Stdout, os.Stderr)
}
