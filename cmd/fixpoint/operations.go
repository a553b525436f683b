package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/model"
)

func newOperationsCmd() *cobra.Command {
	var r remote
	var unit, service, status, format string
	var utc bool
	cmd := &cobra.Command{
		Use:   "operations",
		Short: "List the operations (actions, exec) asked of units, as juju operations does",
		Long: `operations lists the operations run and exec queued, oldest first: each
unit's unfinished ones and its last ` + strconv.Itoa(model.ActionHistory) + ` finished ones. --unit,
--service and --status (pending, running, completed, failed; comma-separated)
narrow the list. It prints juju operations' table (ID, Status, Started,
Finished, Task IDs, Summary), or with -o yaml|json Juju's map of
operations by id (summary, status, action, timing, tasks); times are
local unless --utc. With none to list it says so on stderr.` + remoteEnvHelp,
		Example: `  fixpoint operations
  fixpoint operations --unit db/0 --status failed
  fixpoint operations --service web -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			ops, err := c.Operations(cmd.Context(), unit, service, status)
			if err != nil {
				return exitf(exitFailed, "operations: %v", err)
			}
			if len(ops) == 0 {
				// As Juju: a note on stderr, nothing on stdout.
				fmt.Fprintln(cmd.ErrOrStderr(), "no matching operations")
				return nil
			}
			out, loc := cmd.OutOrStdout(), timeZone(utc)
			if format == "table" {
				return writeOperationsTable(out, ops, loc)
			}
			return writeJuju(out, operationsView(ops, loc), format)
		},
	}
	r.flags(cmd)
	r.envFlag(cmd)
	cmd.Flags().StringVar(&unit, "unit", "", "only this unit's operations")
	cmd.Flags().StringVar(&service, "service", "", "only the operations of this service's units")
	cmd.Flags().StringVar(&status, "status", "", "only operations in these states: pending, running, completed, failed (comma-separated)")
	cmd.Flags().BoolVar(&utc, "utc", false, "print times in UTC, not local time")
	formatFlag(cmd, &format)
	return cmd
}

func newShowOperationCmd() *cobra.Command {
	var r remote
	var format string
	var wait time.Duration
	var utc bool
	cmd := &cobra.Command{
		Use:   "show-operation ID",
		Short: "Show one operation: its params, status, results and log, as juju show-operation does",
		Long: `show-operation prints operation ID (the number run and exec print): its
summary, status, action and params, times and its task (unit, status,
times, log, message, results) in juju show-operation's layout; times are
local unless --utc. --wait waits up to that long for it to finish first. It exits 0
whatever the operation's status; 1 when there is no such operation.` + remoteEnvHelp,
		Example: `  fixpoint show-operation 7
  fixpoint show-operation 7 --wait 1m -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "json" && format != "yaml" {
				return exitf(exitFailed, "show-operation: --format %q: use yaml or json", format)
			}
			id, err := strconv.Atoi(args[0])
			if err != nil || id <= 0 {
				return exitf(exitFailed, "show-operation: %q is not an operation id (a positive number, as run prints)", args[0])
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			a, err := awaitOperation(cmd.Context(), c, id, wait)
			if err != nil {
				return exitf(exitFailed, "show-operation %d: %v", id, err)
			}
			return writeJuju(cmd.OutOrStdout(), operationView(a, timeZone(utc)), format)
		},
	}
	r.flags(cmd)
	r.envFlag(cmd)
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long for the operation to finish")
	cmd.Flags().StringVarP(&format, "format", "o", "yaml", "output format: yaml or json")
	cmd.Flags().BoolVar(&utc, "utc", false, "print times in UTC, not local time")
	return cmd
}
