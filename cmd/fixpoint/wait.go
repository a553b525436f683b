package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"
)

func newWaitCmd() *cobra.Command {
	var r remote
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait",
		Short: "Wait for the fixed point, showing progress",
		Long: `wait follows the environment until it converges (exit 0), a unit goes into
error (exit 3, naming it) or the timeout passes (exit 4).`,
		Example: `  fixpoint apply -f env.cue && fixpoint wait --timeout 5m`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := r.client()
			if err != nil {
				return err
			}
			code, st, err := waitConverged(cmd.Context(), c, &progress{w: os.Stdout}, timeout, true)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			return convergeExit(code, st, timeout)
		},
	}
	r.flags(cmd)
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long to wait")
	return cmd
}
