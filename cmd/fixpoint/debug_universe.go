package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/api"
)

func newDebugUniverseCmd() *cobra.Command {
	var r remote
	cmd := &cobra.Command{
		Use:               "universe UNIT",
		Short:             "Print the universe UNIT's hook would be given now",
		Example:           `  fixpoint debug universe web/0 | jq .relations`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeUnits,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := r.client()
			if err != nil {
				return err
			}
			if !strings.Contains(args[0], "/") {
				return notAUnit(cmd.Context(), c, args[0], "debug universe")
			}
			raw, err := c.Universe(cmd.Context(), args[0])
			if err != nil {
				return exitf(exitFailed, "universe of %s: %v", args[0], err)
			}
			var out bytes.Buffer
			if err := json.Indent(&out, raw, "", "  "); err != nil {
				return err
			}
			fmt.Fprintln(os.Stdout, out.String())
			return nil
		},
	}
	r.flags(cmd)
	r.envFlag(cmd)
	r.revealFlag(cmd)
	return cmd
}

// notAUnit explains a command that takes a unit given something else: the
// control plane says what the name is (a service gets its units listed).
func notAUnit(ctx context.Context, c *api.Client, name, command string) error {
	_, err := c.Unit(ctx, name)
	if err == nil || api.IsUnknownRoute(err) {
		return exitf(exitFailed, "%s is not a unit (units look like SERVICE/N, e.g. web/0)", name)
	}
	return exitf(exitFailed, "%s %s: %v", command, name, err)
}
