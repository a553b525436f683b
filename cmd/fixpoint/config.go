package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/api"
)

func newConfigCmd() *cobra.Command {
	var r remote
	var format string
	cmd := &cobra.Command{
		Use:   "config SERVICE",
		Short: "Show a service's effective config, with defaults marked",
		Long: `config shows every option of SERVICE's charm: its type, the value the unit
hooks get, and where it comes from: "set" (the environment sets it),
"default" (the charm's default applies) or "unset" (no value, no default).
Config is changed by editing the environment and applying it; there is no
set command.

Secret values (config options of type secret; relation, application and
leader keys named like password, secret, token, key or credential) are shown
as <redacted sha256:…>, a prefix of their hash; --reveal shows them, to the
operator credential only.`,
		Example: `  fixpoint config db
  fixpoint config web -o json | jq '.config.port.value'`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeServices,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			sc, err := serviceConfig(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch format {
			case "json":
				return writeJSONStatus(out, sc, false)
			case "yaml":
				return writeYAML(out, sc)
			}
			printConfig(out, sc)
			return nil
		},
	}
	r.flags(cmd)
	r.revealFlag(cmd)
	formatFlag(cmd, &format)
	return cmd
}

// serviceConfig reads svc's effective config from the control plane; one
// without GET /v1/services gets it worked out here from the whole state.
func serviceConfig(ctx context.Context, c *api.Client, svc string) (*api.ServiceConfig, error) {
	if owner, _, ok := strings.Cut(svc, "/"); ok {
		return nil, exitf(exitFailed, "%s is a unit; config belongs to its service: fixpoint config %s", svc, owner)
	}
	sc, err := c.ServiceConfig(ctx, svc)
	if api.IsUnknownRoute(err) {
		st, err := c.State(ctx, false)
		if err != nil {
			return nil, exitf(exitFailed, "read the environment: %v", err)
		}
		if sc, err = api.NewServiceConfig(st, svc); err != nil {
			return nil, exitf(exitFailed, "%v", err)
		}
		return sc, nil
	}
	if errors.Is(err, api.ErrNotFound) {
		return nil, exitf(exitFailed, "%v", err)
	}
	if err != nil {
		return nil, exitf(exitFailed, "config of %s: %v", svc, err)
	}
	return sc, nil
}

func printConfig(w io.Writer, sc *api.ServiceConfig) {
	fmt.Fprintf(w, "Service %s (charm %s)\n\n", sc.Service, sc.Charm)
	if len(sc.Config) == 0 {
		fmt.Fprintln(w, "its charm has no options")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "OPTION\tTYPE\tVALUE\tSOURCE\tDESCRIPTION")
	for _, k := range slices.Sorted(maps.Keys(sc.Config)) {
		cv := sc.Config[k]
		val := "-"
		if cv.Value != nil {
			val = oneLine(fmt.Sprint(cv.Value))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k, cv.Type, val, cv.Source, oneLine(cv.Description))
	}
	tw.Flush()
}
