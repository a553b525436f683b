package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// The juju front's operations: run, exec, show-operation, show-task and
// operations, through the code fixpoint run and exec use (actionParams,
// awaitOperation, runView, operationView).

// opFlags are the flags juju run and juju exec share.
type opFlags struct {
	format     string
	wait       time.Duration
	background bool
	utc        bool
	quiet      bool
}

func (o *opFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.format, "format", "plain", "output format: plain, json or yaml")
	cmd.Flags().DurationVar(&o.wait, "wait", defaultOperationWait, "how long to wait for the task to finish")
	cmd.Flags().BoolVar(&o.background, "background", false, "queue the task, print its id and return")
	cmd.Flags().BoolVar(&o.utc, "utc", false, "print times in UTC")
	cmd.Flags().BoolVar(&o.quiet, "quiet", false, "print no progress on stderr")
	// Juju's colour switches change nothing here: the front prints none.
	cmd.Flags().Bool("color", false, "accepted for Juju's command line; the output has no colour")
	cmd.Flags().Bool("no-color", false, "accepted for Juju's command line; the output has no colour")
}

func (f *jujuFront) runCmd() *cobra.Command {
	var o opFlags
	var paramsFile string
	var stringArgs bool
	cmd := &cobra.Command{
		Use:   "run UNIT|APP/leader ACTION [KEY=VALUE ...] [--params FILE] [--wait D] [--format json|yaml]",
		Short: "Run an action on a unit and wait for it, as juju run does",
		Long: `run queues ACTION on the unit, waits for it and prints its task, as juju run
does: with --format json|yaml the map of the unit's task (id, status,
message, results with return-code, stdout and stderr, log, timing, unit).
KEY=VALUE params are read as YAML unless --string-args; --params reads a
YAML file first.

Exit status, as Juju's: 0 when the task ran, whatever its status (an action
that called action-fail is "failed" with return code 0); 1 with "ERROR the
following task failed:" when the action's process exited non-zero (its
task is still printed); 1 with "timed out" when --wait passed first; 1 with
"(not found)" for an unknown unit or action.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkJujuFormat("run", o.format, "plain", "json", "yaml"); err != nil {
				return err
			}
			if strings.Contains(args[1], "/") {
				return exitf(exitFailed, "juju run on more than one unit (%s, %s, ...) is not supported by fixpoint yet: run the action once per unit", args[0], args[1])
			}
			params, err := actionParams(paramsFile, args[2:], stringArgs)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			c, err := f.checkedClient(cmd.Context())
			if err != nil {
				return err
			}
			return f.operate(cmd, c, &api.Enqueue{Unit: args[0], Action: args[1], Params: params}, o)
		},
	}
	o.add(cmd)
	cmd.Flags().StringVar(&paramsFile, "params", "", "YAML file of params; KEY=VALUE arguments override it")
	cmd.Flags().BoolVar(&stringArgs, "string-args", false, "take every KEY=VALUE value as a string")
	return cmd
}

func (f *jujuFront) execCmd() *cobra.Command {
	var o opFlags
	var units []string
	var machine string
	cmd := &cobra.Command{
		Use:   "exec --unit UNIT [--wait D] [--format json|yaml] -- COMMAND...",
		Short: "Run a command in a unit's hook context and wait for it, as juju exec does",
		Long: `exec runs COMMAND (its words joined by spaces, run by /bin/sh -c) in UNIT's
hook context on its machine, as fixpoint exec does, and prints its task as
juju exec does. Exit status, as Juju's: 0 when the command exited 0; 1 with
"ERROR the following task failed:" (the task still printed) when it did
not; 1 with "timed out" when --wait passed first.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkJujuFormat("exec", o.format, "plain", "json", "yaml"); err != nil {
				return err
			}
			if machine != "" {
				return exitf(exitFailed, "juju exec --machine is not supported by fixpoint: a command runs in a unit's hook context; name a unit on machine %s with --unit", machine)
			}
			if len(units) != 1 {
				return exitf(exitFailed, "juju exec needs exactly one --unit (fixpoint runs a command on one unit at a time); got %d", len(units))
			}
			command := strings.Join(args, " ")
			if len(command) > model.MaxExecBytes {
				return exitf(exitFailed, "a command of %d bytes; the limit is %d", len(command), model.MaxExecBytes)
			}
			c, err := f.checkedClient(cmd.Context())
			if err != nil {
				return err
			}
			return f.operate(cmd, c, &api.Enqueue{Unit: units[0], Exec: command}, o)
		},
	}
	o.add(cmd)
	cmd.Flags().StringSliceVarP(&units, "unit", "u", nil, "the unit to run the command on (APP/N or APP/leader)")
	cmd.Flags().StringVar(&machine, "machine", "", "a machine to run the command on (not supported)")
	return cmd
}

// operate queues e, waits for it and prints its task as juju run and
// juju exec do; the error carries Juju's exit status and message.
func (f *jujuFront) operate(cmd *cobra.Command, c *api.Client, e *api.Enqueue, o opFlags) error {
	ctx := cmd.Context()
	id, err := c.Enqueue(ctx, e)
	if err != nil {
		return exitf(exitFailed, "%v%s", err, notFound(ctx, c, e))
	}
	stderr := cmd.ErrOrStderr()
	if o.background {
		fmt.Fprintf(cmd.OutOrStdout(), "Scheduled operation %d with task %d.\nCheck operation status with 'juju show-operation %d'\nCheck task status with 'juju show-task %d'\n", id, id, id, id)
		return nil
	}
	if !o.quiet {
		unit := e.Unit
		if strings.HasSuffix(unit, "/leader") {
			// The control plane queued it on the leader of the moment.
			if a, err := c.Operation(ctx, id, 0); err == nil {
				unit = a.Unit
			}
		}
		fmt.Fprintf(stderr, "Running operation %d with 1 task\n  - task %d on unit-%s\n\nWaiting for task %d...\n", id, id, strings.ReplaceAll(unit, "/", "-"), id)
	}
	a, err := awaitOperation(ctx, c, id, o.wait)
	if err != nil {
		return exitf(exitFailed, "task %d: %v", id, err)
	}
	if !a.Finished() {
		return exitf(exitFailed, "timed out waiting for results from: unit %s (task %d keeps going: juju show-task %d)", a.Unit, id, id)
	}
	loc, out := timeZone(o.utc), cmd.OutOrStdout()
	switch {
	case o.format != "plain":
		if err := printOperation(out, a, o.format, loc); err != nil {
			return err
		}
	case a.Name == model.ExecName:
		printExec(out, stderr, a)
	default:
		printAction(out, stderr, a, loc)
	}
	if code := taskCode(a); code > 0 {
		return exitf(exitFailed, "the following task failed:\n - id %q with return code %d\n\nuse 'juju show-task' to inspect the failure", strconv.Itoa(a.ID), code)
	}
	return nil
}

// taskCode is a finished task's return code as Juju reads it for its exit
// status: the results' return-code, -1 when there is none.
func taskCode(a *model.Action) int {
	v, ok := a.Results["return-code"]
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(fmt.Sprint(model.WholeNumbers(v)))
	if err != nil {
		return -1
	}
	return n
}

// notFound is " (not found)", Juju's mark that jubilant reads, when the
// refused operation named a unit, application or action the model does
// not have; "" for any other refusal.
func notFound(ctx context.Context, c *api.Client, e *api.Enqueue) string {
	st, err := c.State(ctx, false)
	if err != nil {
		return ""
	}
	unit := e.Unit
	if svc, ok := strings.CutSuffix(unit, "/leader"); ok {
		s := st.Services[svc]
		if s == nil {
			return " (not found)"
		}
		unit = s.Leader
	}
	u := st.Units[unit]
	if u == nil {
		return " (not found)"
	}
	if e.Exec != "" {
		return ""
	}
	var ch *model.Charm
	if svc := st.Services[u.Service]; svc != nil {
		ch = st.Charms[svc.Charm]
	}
	if ch == nil {
		return ""
	}
	if _, ok := ch.Meta.Actions[e.Action]; !ok {
		return " (not found)"
	}
	return ""
}

// operationID parses a task or operation id.
func operationID(arg string) (int, error) {
	id, err := strconv.Atoi(arg)
	if err != nil || id <= 0 {
		return 0, exitf(exitFailed, "invalid task or operation id %q", arg)
	}
	return id, nil
}

func (f *jujuFront) showTaskCmd() *cobra.Command {
	var format string
	var wait time.Duration
	var utc bool
	cmd := &cobra.Command{
		Use:   "show-task ID [--format plain|json|yaml]",
		Short: "Show one task (a run or exec), as juju show-task does",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkJujuFormat("show-task", format, "plain", "json", "yaml"); err != nil {
				return err
			}
			a, err := f.operation(cmd.Context(), "task", args[0], wait)
			if err != nil {
				return err
			}
			loc := timeZone(utc)
			if format == "plain" {
				printAction(cmd.OutOrStdout(), cmd.ErrOrStderr(), a, loc)
				return nil
			}
			return writeJuju(cmd.OutOrStdout(), runView(a, loc)[a.Unit], format)
		},
	}
	jujuFormat(cmd, &format, "plain", "plain", "json", "yaml")
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long for the task to finish")
	cmd.Flags().BoolVar(&utc, "utc", false, "print times in UTC")
	return cmd
}

// operation is the operation arg names (a task or operation id, as
// what calls it), waited for up to wait, once --model names the
// environment.
func (f *jujuFront) operation(ctx context.Context, what, arg string, wait time.Duration) (*model.Action, error) {
	id, err := operationID(arg)
	if err != nil {
		return nil, err
	}
	c, err := f.checkedClient(ctx)
	if err != nil {
		return nil, err
	}
	a, err := awaitOperation(ctx, c, id, wait)
	if err != nil {
		return nil, exitf(exitFailed, "%s %d: %v", what, id, err)
	}
	return a, nil
}

func (f *jujuFront) showOperationCmd() *cobra.Command {
	var format string
	var wait time.Duration
	var utc bool
	cmd := &cobra.Command{
		Use:   "show-operation ID [--format json|yaml]",
		Short: "Show one operation, as juju show-operation does",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkJujuFormat("show-operation", format, "yaml", "json"); err != nil {
				return err
			}
			a, err := f.operation(cmd.Context(), "operation", args[0], wait)
			if err != nil {
				return err
			}
			return writeJuju(cmd.OutOrStdout(), operationView(a, timeZone(utc)), format)
		},
	}
	jujuFormat(cmd, &format, "yaml", "yaml", "json")
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long for the operation to finish")
	cmd.Flags().BoolVar(&utc, "utc", false, "print times in UTC")
	return cmd
}

func (f *jujuFront) operationsCmd() *cobra.Command {
	var format, apps, units, status string
	var utc bool
	cmd := &cobra.Command{
		Use:     "operations [--units U] [--apps A] [--status S] [--format tabular|json|yaml]",
		Aliases: []string{"list-operations"},
		Short:   "List operations, as juju operations does",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkJujuFormat("operations", format, "tabular", "json", "yaml"); err != nil {
				return err
			}
			c, err := f.checkedClient(cmd.Context())
			if err != nil {
				return err
			}
			ops, err := c.Operations(cmd.Context(), units, apps, status)
			if err != nil {
				return exitf(exitFailed, "operations: %v", err)
			}
			loc := timeZone(utc)
			if len(ops) == 0 && format == "tabular" {
				fmt.Fprintln(cmd.ErrOrStderr(), "no matching operations")
				return nil
			}
			if format == "tabular" {
				return writeOperationsTable(cmd.OutOrStdout(), ops, loc)
			}
			return writeJuju(cmd.OutOrStdout(), operationsView(ops, loc), format)
		},
	}
	jujuFormat(cmd, &format, "tabular", "tabular", "json", "yaml")
	cmd.Flags().StringVar(&units, "units", "", "only this unit's operations")
	cmd.Flags().StringVar(&apps, "apps", "", "only this application's operations")
	cmd.Flags().StringVar(&status, "status", "", "only these states: pending, running, completed, failed (comma-separated)")
	cmd.Flags().BoolVar(&utc, "utc", false, "print times in UTC")
	return cmd
}
