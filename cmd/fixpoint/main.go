// Command fixpoint is the one binary of fixpoint: the control-plane server,
// the machine agent, the embedded default (up), and the operator commands.
// Invoked under a Juju hook tool's name (relation-get, ...) it is that tool:
// the fallback when cmd/fixpoint-hook, the small program behind the tools,
// is not at hand (engine/legacy.ToolsProgram).
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"

	"github.com/spf13/cobra"
)

// Exit codes, distinct so that scripts can tell the outcomes apart.
const (
	exitOK       = 0
	exitFailed   = 1 // bad input, unreachable control plane, ...
	exitChanges  = 2 // plan: something would change
	exitUnitErr  = 3 // a unit is in error
	exitTimeout  = 4 // the timeout passed before the fixed point
	exitInterrup = 130
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func exitf(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

func main() {
	if name := filepath.Base(os.Args[0]); isHookTool(name) {
		os.Exit(hookToolMain(name, os.Args[1:]))
	}
	// FIXPOINT_CPUPROFILE=FILE profiles the whole run, for bench/README.
	if path := os.Getenv("FIXPOINT_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			_ = pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	root := newRootCmd()
	err := root.Execute()
	if err == nil {
		return
	}
	pprof.StopCPUProfile()
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(os.Stderr, "fixpoint:", ee.msg)
		}
		os.Exit(ee.code)
	}
	fmt.Fprintln(os.Stderr, "fixpoint:", err)
	os.Exit(exitFailed)
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "fixpoint",
		Short: "A declarative convergence engine for services and their relations",
		Long: `fixpoint runs an environment declared in CUE: services, their charms, unit
counts, config and relations. Every unit's charm gets one reconcile hook with
everything the unit can see; what it returns is replicated through Raft and
wakes the units that see it, until nothing changes: the fixed point.`,
		Example: `  fixpoint up -f testdata/demo/env.cue --until-converged
  fixpoint status --data-dir .fixpoint`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newUpCmd(), newServerCmd(), newAgentCmd(), newVetCmd(), newPlanCmd(), newApplyCmd(), newStatusCmd(), newWaitCmd(), newTLSCmd(), newResolvedCmd(), newMachineCmd(), newTokenCmd(), newClusterCmd(), newDebugCmd(), newLogsCmd(), newCompletionCmd(), newCharmCmd())
	wireCompletions(root)
	return root
}

func newDebugCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "debug",
		Short:   "Look inside: universes and legacy events",
		Example: "  fixpoint debug universe web/0\n  fixpoint debug explain web/0",
	}
	cmd.AddCommand(newDebugUniverseCmd(), newDebugExplainCmd(), newDebugEventsCmd())
	return cmd
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
