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
			return convergeExit(code, sum, finalTable(ctx, c, sum), timeout, failOnBlocked, keepGoing)
		},
	}
	r.flags(cmd)
	r.envFlag(cmd)
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long to wait")
	failOnBlockedFlag(cmd, &failOnBlocked)
	keepGoingFlag(cmd, &keepGoing)
	return cmd
}

// startGrace bounds how long wait waits for an up it may have been
// started beside (`fixpoint up ... & fixpoint wait`) to take the data dir
// and publish its address: until then the data dir may name no address,
// or the dead one of an up that was killed.
const startGrace = 30 * time.Second

// clientWhenStarted is client, but waits while an up on the data dir is
// starting and has not published its address yet, and for startGrace
// (or until ctx ends, if sooner) while none holds the data dir yet.
func (r *remote) clientWhenStarted(ctx context.Context) (*api.Client, error) {
	said := false
	grace := time.Now().Add(startGrace)
	for {
		// A copy per try: client fills in what the data dir says, and
		// a stale endpoint's must not stick.
		try := *r
		c, err := try.client()
		switch {
		case err == nil:
			*r = try
			return c, nil
		case errors.Is(err, errStarting):
		case errors.Is(err, errNoUp) && time.Now().Before(grace):
		default:
			return nil, err
		}
		if !said {
			fmt.Fprintf(os.Stderr, "waiting for fixpoint up on %s to start and publish its address\n", r.dataDir)
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, exitf(exitTimeout, "fixpoint up on %s did not publish its address in time", r.dataDir)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
