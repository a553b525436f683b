package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/charm"
	"github.com/fixpoint/fixpoint/schemas"
)

func newVetCmd() *cobra.Command {
	var files, allowOutside []string
	var limits limitFlags
	var warnUnits int
	var repo string
	cmd := &cobra.Command{
		Use:   "vet ENV.cue... | vet DIR",
		Short: "Check an environment and its charms without running anything",
		Long: `vet loads an environment — one .cue file, several files of one directory, or a
directory whose .cue files unify — checks it against the environment schema,
reads the metadata of every charm it names (charm.cue, or metadata.yaml and
config.yaml; paths are relative to the environment's directory; resource
files must be inside it unless --allow-outside names them) and checks
the whole as the control plane would: services, endpoints, interfaces,
config types, relation limits, subordinates, and the control plane's limits
on units, services, relations, config and machines: the defaults, or those
the --max-* flags give (a cluster started with raised limits needs the same
flags here).

It warns (on stderr, without failing) about Juju features a charm declares
that fixpoint has no counterpart for: storage, resources, workload
containers, secret options; and about a service of more units than
--warn-units (default 1,000), more often a typo than a plan. It prints every problem, one per line, as
  file:line:col: path: what is wrong and how to fix it
and exits 1; or prints "ok: N services, M relations" and exits 0. Nothing is
built, packed or sent anywhere; a .charm archive is extracted into the
user's charm cache, and a bare charm name is found in --repository.`,
		Example: `  fixpoint vet env.cue
  fixpoint vet envs/shop/          # every .cue file in the directory
  fixpoint vet base.cue prod.cue   # files that unify into one environment`,
		RunE: func(cmd *cobra.Command, args []string) error {
			paths := append(append([]string(nil), files...), args...)
			if len(paths) == 0 {
				return exitf(exitFailed, "vet: name the environment: fixpoint vet ENV.cue (or a directory)")
			}
			if err := limits.check(); err != nil {
				return err
			}
			c, err := charm.CheckWith(charm.Options{Limits: &limits.value, AllowOutside: allowOutside, Repository: repo}, paths...)
			var se *schemas.Error
			if errors.As(err, &se) {
				for _, p := range se.Problems {
					fmt.Fprintln(cmd.ErrOrStderr(), p.String())
				}
				return exitf(exitFailed, "vet: %d problem%s", len(se.Problems), vetPlural(len(se.Problems)))
			}
			if err != nil {
				return exitf(exitFailed, "vet: %v", err)
			}
			for _, w := range c.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+w.String())
			}
			warnLarge(cmd.ErrOrStderr(), c.Env, warnUnits)
			for _, o := range c.Outside {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: resource %s of %s reads %s, outside the environment's directory (--allow-outside)\n", o.Name, o.Service, o.Path)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ok: %d services, %d relations\n", len(c.Env.Env.Services), len(c.Env.Env.Relations))
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&files, "file", "f", nil, "environment file or directory (repeatable; same as naming them as arguments)")
	limits.flags(cmd.Flags())
	warnUnitsFlag(cmd, &warnUnits)
	allowOutsideFlag(cmd, &allowOutside)
	repositoryFlag(cmd, &repo)
	return cmd
}

func vetPlural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
