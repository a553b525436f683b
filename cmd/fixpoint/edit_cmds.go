package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/charm"
	"github.com/fixpoint/fixpoint/model"
)

// numUnitsFlag is -n/--num-units, Juju's spelling for deploy and
// add-unit.
func numUnitsFlag(cmd *cobra.Command, n *int) {
	cmd.Flags().IntVarP(n, "num-units", "n", 1, "how many units")
}

func newDeployCmd() *cobra.Command {
	var o editOpts
	var n, revision int
	var configs, resources, to, relates []string
	var configFile, channel string
	var trust bool
	cmd := &cobra.Command{
		Use:   "deploy CHARM [SERVICE]",
		Short: "Add a service running CHARM to the environment",
		Long: `deploy adds SERVICE (by default the charm's name) to the environment's
desired document and applies it, as apply would an environment file that
declares it. CHARM is a charm directory, a .charm archive, or a NAME found
in the charm repository (--repository, $FIXPOINT_CHARM_REPO) as NAME.charm
or NAME/; the charm is checked as vet checks it, packed and uploaded unless
the control plane has it. The document records CHARM as written, so that
relative paths resolve from this directory, as those of an environment
file from its own: run export from here and its file applies as it is.

--config takes KEY=VALUE, or a YAML file (as --config-file): either
{KEY: VALUE} or Juju's {SERVICE: {KEY: VALUE}}; KEY=VALUE pairs win. Values
are typed and checked against the charm's options. --resource NAME=PATH
names a resource's file; --to places the units on those machines.

The environment is read, edited and applied against the revision read; if
another change lands first, deploy reads it again and retries. Nothing
changes when the edit fails a check.`,
		Example: `  fixpoint deploy ./charms/db
  fixpoint deploy ./charms/web shop -n 3 --config port=8080 --wait
  fixpoint deploy postgresql db --repository ~/charms --resource image=./pg.tar`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref := strings.TrimSuffix(args[0], "/")
			if cmd.Flags().Changed("revision") && (revision < 0 || channel == "") {
				return exitf(exitFailed, "--revision %d: a revision needs a --channel and must be 0 or more (as Juju's)", revision)
			}
			wd, err := os.Getwd()
			if err != nil {
				return exitf(exitFailed, "deploy: the working directory: %v", err)
			}
			meta, err := charm.LoadMeta(ref, wd, o.repo)
			if err != nil {
				return exitf(exitFailed, "deploy %s: %v; nothing was changed", ref, err)
			}
			name := meta.Name
			if len(args) == 2 {
				name = args[1]
			}
			set, raw, err := readConfigArgs(configs, configFile, name)
			if err != nil {
				return exitf(exitFailed, "deploy %s: %v; nothing was changed", name, err)
			}
			spec := model.ServiceSpec{Charm: ref, Placement: to, Trust: trust, Channel: channel}
			if cmd.Flags().Changed("revision") {
				spec.Revision = &revision
			}
			switch {
			case meta.Subordinate && cmd.Flags().Changed("num-units"):
				return exitf(exitFailed, "deploy %s: charm %s is subordinate: its units follow the principal units it is related to (relate it to one); leave -n out", name, meta.Name)
			case meta.Subordinate && len(relates) == 0:
				return exitf(exitFailed, "deploy %s: charm %s is subordinate: its units run beside a principal's over a container-scoped relation, which the environment declares with it; deploy it related: fixpoint deploy %s %s --relate PRINCIPAL", name, meta.Name, ref, name)
			case !meta.Subordinate && n < 0:
				return exitf(exitFailed, "deploy %s: -n %d: the number of units must be 0 or more", name, n)
			case !meta.Subordinate:
				spec.Units = &n
			}
			var allow []string
			for _, r := range resources {
				k, v, ok := strings.Cut(r, "=")
				if !ok || k == "" || v == "" {
					return exitf(exitFailed, "--resource %q: write NAME=PATH", r)
				}
				if spec.Resources == nil {
					spec.Resources = map[string]string{}
				}
				spec.Resources[k] = v
				// A file named on the command line is read where it is.
				abs, err := filepath.Abs(v)
				if err != nil {
					return exitf(exitFailed, "--resource %s: %v", r, err)
				}
				allow = append(allow, abs)
			}
			return o.run(cmd.Context(), &edit{
				what: "deploy " + name, fresh: []string{name}, allowOutside: allow,
				change: func(_ context.Context, doc *api.EnvDoc, env *model.Environment) error {
					if err := model.EditAddService(env, name, spec); err != nil {
						return err
					}
					if err := model.EditConfig(env, name, meta, set, raw, nil); err != nil {
						return err
					}
					return relateNew(doc, env, name, meta, relates)
				},
			})
		},
	}
	o.flags(cmd, false)
	repositoryFlag(cmd, &o.repo)
	numUnitsFlag(cmd, &n)
	cmd.Flags().StringArrayVar(&configs, "config", nil, "KEY=VALUE, or a YAML file of options (repeatable)")
	cmd.Flags().StringVar(&configFile, "config-file", "", "a YAML file of options: {KEY: VALUE} or {SERVICE: {KEY: VALUE}}")
	cmd.Flags().StringArrayVar(&resources, "resource", nil, "NAME=PATH: the file of one of the charm's resources (repeatable)")
	cmd.Flags().StringSliceVar(&to, "to", nil, "the machines to place the units on (repeatable, or comma-separated)")
	cmd.Flags().StringVar(&channel, "channel", "", "the charm store channel to record (Juju's); the charm is still CHARM as found")
	cmd.Flags().IntVar(&revision, "revision", 0, "the charm store revision to record, with --channel (Juju's)")
	cmd.Flags().BoolVar(&trust, "trust", false, "let the units read the environment's cloud credential")
	cmd.Flags().StringArrayVar(&relates, "relate", nil, "SERVICE[:ENDPOINT] to relate the new service to in the same change, as relate infers it (repeatable; a subordinate needs its principal here)")
	return cmd
}

// readConfigArgs reads deploy's --config and --config-file: typed values
// from YAML files, and KEY=VALUE pairs as written, which win. A --config
// argument without "=" is a file, as Juju's.
func readConfigArgs(args []string, file, service string) (map[string]any, map[string]string, error) {
	set, raw := map[string]any{}, map[string]string{}
	files := []string{}
	if file != "" {
		files = append(files, file)
	}
	for _, a := range args {
		if k, v, ok := strings.Cut(a, "="); ok {
			if k == "" {
				return nil, nil, fmt.Errorf("--config %q: write KEY=VALUE", a)
			}
			raw[k] = v
			continue
		}
		files = append(files, a)
	}
	for _, f := range files {
		vals, err := readConfigFile(f, service)
		if err != nil {
			return nil, nil, err
		}
		for k, v := range vals {
			set[k] = v
		}
	}
	for k := range raw {
		delete(set, k)
	}
	return set, raw, nil
}

// maxConfigFile caps a config file: a page of options.
const maxConfigFile = 1 << 20

// readConfigFile reads a YAML file of options: {KEY: VALUE}, or Juju's
// {SERVICE: {KEY: VALUE}} when its one key is the service's name.
func readConfigFile(path, service string) (map[string]any, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %v", err)
	}
	if fi.Size() > maxConfigFile {
		return nil, fmt.Errorf("config file %s is %d bytes; the cap is %d", path, fi.Size(), maxConfigFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %v", err)
	}
	var vals map[string]any
	if err := yaml.Unmarshal(data, &vals); err != nil {
		return nil, fmt.Errorf("config file %s: %v; write a YAML map of options, KEY: VALUE", path, err)
	}
	if inner, ok := vals[service].(map[string]any); ok && len(vals) == 1 {
		vals = inner
	}
	return vals, nil
}

func newAddUnitCmd() *cobra.Command {
	var o editOpts
	var n int
	cmd := &cobra.Command{
		Use:   "add-unit SERVICE",
		Short: "Add units to a service",
		Long: `add-unit raises SERVICE's unit count in the environment's desired document
by -n (default 1) and applies it; the new units get numbers never used
before in the service. The environment is read, edited and applied against
the revision read, again if another change lands first.`,
		Example:           "  fixpoint add-unit web -n 2 --wait",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeServices,
		RunE: func(cmd *cobra.Command, args []string) error {
			svc := args[0]
			return o.run(cmd.Context(), &edit{
				what: "add-unit " + svc,
				change: func(_ context.Context, doc *api.EnvDoc, env *model.Environment) error {
					meta, err := charmOf(doc, env, svc)
					if err != nil {
						return err
					}
					return model.EditAddUnits(env, svc, n, meta)
				},
			})
		},
	}
	o.flags(cmd, false)
	numUnitsFlag(cmd, &n)
	return cmd
}

func newRemoveUnitCmd() *cobra.Command {
	var o editOpts
	cmd := &cobra.Command{
		Use:   "remove-unit UNIT...",
		Short: "Remove exactly these units",
		Long: `remove-unit removes the named units — those, not the newest — from the
environment: their services' counts in the desired document drop by one
each, and the units go through their dying hooks. Unit numbers are never
used again in a service. As apply's removals, it asks on a terminal; a
script passes --yes (without it the exit code is 2 and nothing changes).`,
		Example:           "  fixpoint remove-unit db/3 --yes --wait",
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeUnits,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.r.client()
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), &edit{
				what: "remove-unit " + strings.Join(args, " "), removeUnits: args, confirm: newConfirm(o.yes),
				change: func(ctx context.Context, _ *api.EnvDoc, env *model.Environment) error {
					var lookErr error
					alive := func(u string) bool {
						d, err := c.Unit(ctx, u)
						if err != nil && !errors.Is(err, api.ErrNotFound) && lookErr == nil {
							lookErr = exitf(exitFailed, "remove-unit: read unit %s: %v", u, err)
						}
						return err == nil && d.Life == string(model.Alive)
					}
					err := model.EditRemoveUnits(env, args, alive)
					if lookErr != nil {
						return lookErr
					}
					return err
				},
			})
		},
	}
	o.flags(cmd, true)
	return cmd
}

func newRemoveServiceCmd() *cobra.Command {
	var o editOpts
	cmd := &cobra.Command{
		Use:   "remove-service SERVICE...",
		Short: "Remove services, their units and their relations",
		Long: `remove-service removes the named services from the environment's desired
document, with every relation that names them, and applies it: their units
go through their dying hooks. As apply's removals, it asks on a terminal;
a script passes --yes (without it the exit code is 2 and nothing changes).`,
		Example:           "  fixpoint remove-service web --yes --wait",
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeServices,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), &edit{
				what: "remove-service " + strings.Join(args, " "), confirm: newConfirm(o.yes),
				change: func(_ context.Context, _ *api.EnvDoc, env *model.Environment) error {
					return model.EditRemoveServices(env, args)
				},
			})
		},
	}
	o.flags(cmd, true)
	return cmd
}

// relateNew relates service name, just added to env with charm meta, to
// each of others ("svc" or "svc:ep"), inferred as relate infers: deploy
// --relate, in the same change, which a subordinate needs.
func relateNew(doc *api.EnvDoc, env *model.Environment, name string, meta *model.CharmMeta, others []string) error {
	if len(others) == 0 {
		return nil
	}
	rels, metas, err := docRelations(doc)
	if err != nil {
		return err
	}
	metas[name] = meta
	for _, o := range others {
		ends, err := model.InferRelation(name, o, metas)
		if err != nil {
			return fmt.Errorf("--relate %s: %w", o, err)
		}
		rname, err := model.EditAddRelation(env, ends, rels)
		if err != nil {
			return fmt.Errorf("--relate %s: %w", o, err)
		}
		rels = append(rels, model.BoundRelation{Name: rname, Ends: ends})
	}
	return nil
}
