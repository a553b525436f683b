package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func newResolvedCmd() *cobra.Command {
	var r remote
	var noRetry bool
	cmd := &cobra.Command{
		Use:   "resolved UNIT",
		Short: "Move a unit out of error: retry now, or accept the failed universe",
		Long: `resolved retries a unit in error now instead of waiting for its backoff.
With --no-retry the universe that failed is marked reconciled without running
the hook again. A unit that is not in error, or one already marked resolved
with the other mode, is refused.`,
		Example: `  fixpoint resolved web/0
  fixpoint resolved db/1 --no-retry`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := r.client()
			if err != nil {
				return err
			}
			if err := c.Resolved(cmd.Context(), args[0], noRetry); err != nil {
				return exitf(exitFailed, "resolved %s: %v", args[0], err)
			}
			mode := "will be retried now"
			if noRetry {
				mode = "marked reconciled without a retry"
			}
			fmt.Fprintf(os.Stdout, "%s %s\n", args[0], mode)
			return nil
		},
	}
	r.flags(cmd)
	cmd.Flags().BoolVar(&noRetry, "no-retry", false, "accept the failed universe as reconciled without running the hook")
	return cmd
}
