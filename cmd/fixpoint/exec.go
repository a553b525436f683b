package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

func newExecCmd() *cobra.Command {
	var r remote
	var unit, format string
	var wait time.Duration
	var background, utc bool
	cmd := &cobra.Command{
		Use:   "exec --unit UNIT -- COMMAND...",
		Short: "Run a command in a unit's hook context on its machine, as juju exec does",
		Long: `exec runs COMMAND (its words joined by spaces, run by /bin/sh -c) on UNIT's
machine in the unit's hook context: its charm directory, its environment
(JUJU_UNIT_NAME, ...) and every hook tool, so relation-get, config-get or
status-set work as in a hook; what it writes lands as a hook's writes do.
It runs once, never beside one of the unit's hooks, and needs the operator
credential; the control plane logs who queued it (not the command).

Its stdout and stderr come back to yours; exec exits with the command's exit
status, 1 when it could not run, 4 when --wait passed first. UNIT may be
SERVICE/leader.` + remoteEnvHelp,
		Example: `  fixpoint exec --unit db/0 -- relation-ids db
  fixpoint exec --unit web/leader -- 'config-get port && is-leader'
  fixpoint exec --unit db/0 -o json -- uptime`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if unit == "" {
				return exitf(exitFailed, "exec: --unit UNIT is required (web/0, or web/leader)")
			}
			if format != "" && format != "json" && format != "yaml" {
				return exitf(exitFailed, "exec: --format %q: use yaml or json (default: the command's own output)", format)
			}
			command := strings.Join(args, " ")
			if len(command) > model.MaxExecBytes {
				return exitf(exitFailed, "exec: a command of %d bytes; the limit is %d", len(command), model.MaxExecBytes)
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			return runOperation(cmd, c, &api.Enqueue{Unit: unit, Exec: command}, wait, background, format, timeZone(utc))
		},
	}
	r.flags(cmd)
	r.envFlag(cmd)
	cmd.Flags().StringVarP(&unit, "unit", "u", "", "the unit to run the command as (SERVICE/N or SERVICE/leader)")
	cmd.Flags().DurationVar(&wait, "wait", defaultOperationWait, "how long to wait for the command to finish")
	cmd.Flags().BoolVar(&background, "background", false, "queue the command, print its operation id and return")
	cmd.Flags().StringVarP(&format, "format", "o", "", "print the unit's task as yaml or json, as juju exec --format does")
	cmd.Flags().BoolVar(&utc, "utc", false, "print times in UTC, not local time")
	return cmd
}
