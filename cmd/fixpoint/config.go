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
	"github.com/fixpoint/fixpoint/model"
)

func newConfigCmd() *cobra.Command {
	var o editOpts
	r := &o.r
	var format string
	var reset []string
	cmd := &cobra.Command{
		Use:   "config SERVICE [KEY=VALUE...] [--reset KEY,...]",
		Short: "Show a service's effective config, or set and reset options",
		Long: `config shows every option of SERVICE's charm: its type, the value the unit
hooks get, and where it comes from: "set" (the environment sets it),
"default" (the charm's default applies) or "unset" (no value, no default).

With KEY=VALUE pairs or --reset it changes the environment's desired
document instead and applies it: each value is typed and checked against
the charm's option (an unknown key names the options the charm has), and a
reset key is dropped from the document, so the charm's default applies.
The environment is read, edited and applied against the revision read,
again if another change lands first.

Secret values (config options of type secret; relation, application and
leader keys named like password, secret, token, key or credential) are shown
as <redacted sha256:…>, a prefix of their hash; --reveal shows them, to the
operator credential only.`,
		Example: `  fixpoint config db
  fixpoint config web -o json | jq '.config.port.value'
  fixpoint config web port=8080 debug=true --wait
  fixpoint config web --reset port,debug`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeServices,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 || len(reset) > 0 {
				return setConfig(cmd.Context(), &o, args[0], args[1:], reset)
			}
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
	o.flags(cmd, false)
	r.revealFlag(cmd)
	formatFlag(cmd, &format)
	cmd.Flags().StringSliceVar(&reset, "reset", nil, "options to put back to the charm's default (comma-separated, repeatable)")
	return cmd
}

// setConfig is `config SERVICE KEY=VALUE... --reset KEY,...`: an edit of
// the service's options in the environment's document.
func setConfig(ctx context.Context, o *editOpts, svc string, pairs, reset []string) error {
	raw := map[string]string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return exitf(exitFailed, "config %s: %q is not KEY=VALUE", svc, p)
		}
		if _, dup := raw[k]; dup {
			return exitf(exitFailed, "config %s: option %s is set twice", svc, k)
		}
		raw[k] = v
	}
	return o.run(ctx, &edit{
		what: "config " + svc,
		change: func(_ context.Context, doc *api.EnvDoc, env *model.Environment) error {
			meta, err := charmOf(doc, env, svc)
			if err != nil {
				return err
			}
			return model.EditConfig(env, svc, meta, nil, raw, reset)
		},
	})
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
