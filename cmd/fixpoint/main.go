// Command fixpoint is the one binary of fixpoint: the control-plane server,
// the machine agent, the embedded default (up), and the operator commands.
// Invoked under a Juju hook tool's name (relation-get, ...) it is that tool:
// the fallback when cmd/fixpoint-hook, the small program behind the tools,
// is not at hand (engine/legacy.ToolsProgram). Invoked as juju it is the
// juju front (juju.go): Juju's command line on the control plane.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/api"
)

// Exit codes, distinct so that scripts can tell the outcomes apart.
const (
	exitOK       = 0
	exitFailed   = 1 // bad input, unreachable control plane, ...
	exitChanges  = 2 // plan: something would change
	exitUnitErr  = 3 // a unit is in error
	exitTimeout  = 4 // the timeout passed before the fixed point
	exitLost     = 5 // the fixed point except units on lost machines
	exitBlocked  = 6 // --fail-on-blocked: converged, but units are blocked
	exitInterrup = 130
)

// exitError carries an exit code out of a command, and the errors its
// message was made from, so that main can still recognise them.
type exitError struct {
	code int
	msg  string
	err  error
}

func (e *exitError) Error() string { return e.msg }

func (e *exitError) Unwrap() error { return e.err }

func exitf(code int, format string, args ...any) error {
	var errs []error
	for _, a := range args {
		if err, ok := a.(error); ok {
			errs = append(errs, err)
		}
	}
	return &exitError{code: code, msg: fmt.Sprintf(format, args...), err: errors.Join(errs...)}
}

func main() {
	if name := filepath.Base(os.Args[0]); isHookTool(name) {
		os.Exit(hookToolMain(name, os.Args[1:]))
	}
	if filepath.Base(os.Args[0]) == jujuFrontName {
		os.Exit(jujuMain(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	// FIXPOINT_CPUPROFILE=FILE profiles the whole run, for bench/README.
	if path := os.Getenv("FIXPOINT_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			_ = pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	root := newRootCmd()
	err := suggestCommand(root, os.Args[1:])
	if err == nil {
		err = root.Execute()
	}
	if err == nil {
		return
	}
	pprof.StopCPUProfile()
	code, msg := exitFailed, err.Error()
	var ee *exitError
	if errors.As(err, &ee) {
		code, msg = ee.code, ee.msg
	}
	var ae *api.Error
	if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
		// The server speaks HTTP; the operator at a shell needs flags.
		msg = "the control plane did not accept the operator token (" + ae.Node + " answered 401): pass --token or --token-file, or set FIXPOINT_TOKEN; the token is in operator.token in the data dir of the up or bootstrap server"
	}
	if msg != "" {
		fmt.Fprintln(os.Stderr, "fixpoint:", msg)
	}
	os.Exit(code)
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "fixpoint",
		Short: "A declarative convergence engine for services and their relations",
		Long: `fixpoint runs an environment declared in CUE: services, their charms, unit
counts, config and relations. Every unit's charm gets one reconcile hook with
everything the unit can see; what it returns is replicated through Raft and
wakes the units that see it, until nothing changes: the fixed point.

Commands that talk to a control plane find it with --controller or
$FIXPOINT_ADDR, present the operator token given by --token, --token-file
or $FIXPOINT_TOKEN, and trust the CA of --tls-ca or $FIXPOINT_CA; what
these leave out comes from the saved context (fixpoint login; --context or
$FIXPOINT_CONTEXT picks one), else from what the fixpoint up running on
--data-dir (default .fixpoint) wrote there.`,
		Example: `  fixpoint up -f testdata/demo/env.cue --until-converged
  fixpoint status --data-dir .fixpoint`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionString(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newVersionCmd(), newConfigCmd(), newShowUnitCmd(), newUpCmd(), newServerCmd(), newAgentCmd(), newVetCmd(), newPlanCmd(), newApplyCmd(), newStatusCmd(), newWaitCmd(), newTLSCmd(), newResolvedCmd(), newMachineCmd(), newTokenCmd(), newEnvCmd(), newEnvsCmd(), newClusterCmd(), newDebugCmd(), newLogsCmd(), newDebugLogCmd(), newEventsCmd(), newCompletionCmd(), newCharmCmd(), newLoginCmd(),
		newRunCmd(), newOperationsCmd(), newShowOperationCmd(), newExecCmd(), newSecretsCmd(), newShowSecretCmd(), newImportCmd(),
		newDeployCmd(), newAddUnitCmd(), newRemoveUnitCmd(), newRemoveServiceCmd(), newRelateCmd(), newUnrelateCmd(), newExportCmd(), newJujuCmd())
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
