package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/api"
)

func newWaitCmd() *cobra.Command {
	var r remote
	var timeout time.Duration
	var failOnBlocked, keepGoing bool
	cmd := &cobra.Command{
		Use:   "wait",
		Short: "Wait for the fixed point, showing progress",
		Long: `wait follows the environment until it converges (exit 0), a unit goes into
error (exit 3, naming it) or the timeout passes (exit 4). A fixed point
reached by every unit but those on lost machines exits 5, naming the
machines and the units waiting on them. With --keep-going, a unit in error
does not end the wait: it ends once every other unit settled, then names
the units in error and exits 3. While nothing changes it prints a line
every 10 seconds naming the units that have been out of settled longest. A
fixpoint up that is starting on --data-dir is waited for (up to 30 seconds
for it to publish its address, or the timeout if shorter), and so is the
environment it was given: wait never stops before that is applied. With
--fail-on-blocked, a fixed point with units whose workload is blocked
exits 6.`,
		Example: `  fixpoint up -f env.cue & fixpoint wait --timeout 5m
  fixpoint apply -f env.cue && fixpoint wait --fail-on-blocked
  fixpoint wait --keep-going`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			c, err := r.clientWhenStarted(ctx)
			if err != nil {
				return err
			}
			code, sum, err := waitConverged(ctx, c, &progress{w: os.Stdout}, 0, keepGoing)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			return convergeExit(code, sum, finalTable(ctx, c, sum), timeout, failOnBlocked)
		},
	}
	r.flags(cmd)
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long to wait")
	failOnBlockedFlag(cmd, &failOnBlocked)
	keepGoingFlag(cmd, &keepGoing)
	return cmd
}

// clientWhenStarted is client, but waits while an up on the data dir is
// starting and has not published its address yet.
func (r *remote) clientWhenStarted(ctx context.Context) (*api.Client, error) {
	said := false
	for {
		c, err := r.client()
		if !errors.Is(err, errStarting) {
			return c, err
		}
		if !said {
			fmt.Printf("waiting for fixpoint up on %s to start\n", r.dataDir)
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, exitf(exitTimeout, "fixpoint up on %s did not publish its address in time", r.dataDir)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
