package legacy

import (
	"fmt"
	"io"
	"strings"

	"github.com/fixpoint/fixpoint/engine/legacy/hooktool"
)

// ToolMain is the hook tool called name run by the fixpoint binary itself,
// the fallback when no fixpoint-hook program is at hand (see ToolsProgram):
// it refuses a name that is not a tool, then is the same client as
// fixpoint-hook.
func ToolMain(name string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if !IsTool(name) {
		fmt.Fprintf(stderr, "ERROR %s is not a hook tool; the tools are %s\n", name, strings.Join(ToolNames(), ", "))
		return exitFailed
	}
	return hooktool.Main(name, args, stdin, stdout, stderr)
}
