package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/model"
)

func newResolvedCmd() *cobra.Command {
	var r remote
	var noRetry, all bool
	cmd := &cobra.Command{
		Use:   "resolved UNIT | resolved SERVICE | resolved --all",
		Short: "Move units out of error: retry now, or accept the failed universe",
		Long: `resolved retries a unit in error now instead of waiting for its backoff.
With --no-retry the universe that failed is marked reconciled without running
the hook again. A unit that is not in error, or one already marked resolved
with the other mode, is refused.

Given a SERVICE it resolves every unit of the service in error; with --all,
every unit in error. Either is one command to the control plane, which picks
the units in error when it applies it: a unit not in error, or one marked
resolved the other way, is skipped, not refused. When no unit needs it,
resolved says so and exits 0 (as juju resolved --all does); a service that
does not exist exits 1.`,
		Example: `  fixpoint resolved web/0
  fixpoint resolved db/1 --no-retry
  fixpoint resolved web            # every unit of web in error
  fixpoint resolved --all`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case all && len(args) > 0:
				return exitf(exitFailed, "resolved: name a unit or a service, or pass --all, not both")
			case !all && len(args) == 0:
				return exitf(exitFailed, "resolved: name a unit (web/0) or a service (web), or pass --all for every unit in error")
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			mode := "will be retried now"
			if noRetry {
				mode = "marked reconciled without a retry"
			}
			out := cmd.OutOrStdout()
			if len(args) == 1 && strings.Contains(args[0], "/") {
				if err := c.Resolved(cmd.Context(), args[0], noRetry); err != nil {
					return exitf(exitFailed, "resolved %s: %v", args[0], err)
				}
				fmt.Fprintf(out, "%s %s\n", args[0], mode)
				return nil
			}
			service, what := "", "every unit"
			if len(args) == 1 {
				service, what = args[0], "the units of "+args[0]
			}
			resp, err := c.ResolveBatch(cmd.Context(), service, noRetry)
			if err != nil {
				return exitf(exitFailed, "resolved %s: %v", strings.TrimPrefix(what, "the units of "), err)
			}
			printResolved(out, what, mode, resp)
			return nil
		},
	}
	r.flags(cmd)
	r.envFlag(cmd)
	cmd.Flags().BoolVar(&noRetry, "no-retry", false, "accept the failed universe as reconciled without running the hook")
	cmd.Flags().BoolVar(&all, "all", false, "resolve every unit in error")
	return cmd
}

// printResolved says which units a batch resolve marked, or that none
// needed it.
func printResolved(w io.Writer, what, mode string, resp *model.Response) {
	n := len(resp.Resolved) + resp.ResolvedMore
	if n == 0 {
		fmt.Fprintf(w, "nothing to resolve: no unit among %s is in error (or each is marked resolved already)\n", what)
		return
	}
	names := strings.Join(resp.Resolved, ", ")
	if resp.ResolvedMore > 0 {
		names += fmt.Sprintf(" and %s more", model.Thousands(resp.ResolvedMore))
	}
	units := "units"
	if n == 1 {
		units = "unit"
	}
	fmt.Fprintf(w, "%s %s %s: %s\n", model.Thousands(n), units, mode, names)
}
