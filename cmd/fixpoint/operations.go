package main

import (
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/model"
)

func newOperationsCmd() *cobra.Command {
	var r remote
	var unit, service, status, format string
	cmd := &cobra.Command{
		Use:   "operations",
		Short: "List the operations (actions, exec) asked of units, as juju operations does",
		Long: `operations lists the operations run and exec queued, oldest first: each
unit's unfinished ones and its last ` + strconv.Itoa(model.ActionHistory) + ` finished ones. --unit,
--service and --status (pending, running, completed, failed; comma-separated)
narrow the list.` + remoteEnvHelp,
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
			out := cmd.OutOrStdout()
			views := make([]operationView, len(ops))
			for i := range ops {
				views[i] = viewOf(&ops[i])
			}
			switch format {
			case "json":
				return writeJSONStatus(out, views, false)
			case "yaml":
				return writeYAML(out, views)
			}
			if len(ops) == 0 {
				fmt.Fprintln(out, "no operations")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tUNIT\tACTION\tSTATUS\tQUEUED\tFINISHED\tMESSAGE")
			for _, a := range ops {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Unit, a.Name, a.Status, clock(a.Enqueued), clock(a.Completed), oneLine(a.Message))
			}
			return tw.Flush()
		},
	}
	r.flags(cmd)
	cmd.Flags().StringVar(&unit, "unit", "", "only this unit's operations")
	cmd.Flags().StringVar(&service, "service", "", "only the operations of this service's units")
	cmd.Flags().StringVar(&status, "status", "", "only operations in these states: pending, running, completed, failed (comma-separated)")
	formatFlag(cmd, &format)
	return cmd
}

func newShowOperationCmd() *cobra.Command {
	var r remote
	var format string
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "show-operation ID",
		Short: "Show one operation: its params, status, results and log, as juju show-operation does",
		Long: `show-operation prints operation ID (the number run and exec print): its
unit, action or command, params, status, message, results, log lines and
times. --wait waits up to that long for it to finish first. It exits 0
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
			return printOperation(cmd.OutOrStdout(), a, format)
		},
	}
	r.flags(cmd)
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long for the operation to finish")
	cmd.Flags().StringVarP(&format, "format", "o", "yaml", "output format: yaml or json")
	return cmd
}

// clock is a time of day for tables, "" for none.
func clock(ns int64) string {
	if ns == 0 {
		return "-"
	}
	return time.Unix(0, ns).UTC().Format("15:04:05")
}
