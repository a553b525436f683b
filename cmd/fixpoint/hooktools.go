package main

import (
	"os"

	"github.com/fixpoint/fixpoint/engine/legacy"
)

// isHookTool reports whether the binary was invoked under a Juju hook
// tool's name (relation-get, config-get, ...) through the symlinks the
// old-hook adapter puts first on a hook's PATH.
func isHookTool(name string) bool { return legacy.IsTool(name) }

// hookToolMain runs the hook tool called name and returns its exit code.
func hookToolMain(name string, args []string) int {
	return legacy.ToolMain(name, args, os.Stdin, os.Stdout, os.Stderr)
}
