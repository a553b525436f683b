package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func newDebugUniverseCmd() *cobra.Command {
	var r remote
	cmd := &cobra.Command{
		Use:     "universe UNIT",
		Short:   "Print the universe UNIT's hook would be given now",
		Example: `  fixpoint debug universe web/0 | jq .relations`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := r.client()
			if err != nil {
				return err
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
	return cmd
}
