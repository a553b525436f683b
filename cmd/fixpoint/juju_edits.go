package main

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// The juju front's edits: deploy, add-unit, remove-unit,
// remove-application, integrate, remove-relation and config APP
// KEY=VALUE are fixpoint's edits by command (edit_cmds.go,
// edit_relate.go, config.go), run with Juju's command line mapped onto
// theirs: each reads the environment's document, edits it and applies it
// as fixpoint's own command does.

// viaFixpoint runs the fixpoint command mk makes with args, under the
// juju front's streams, on the environment --model names (its --env).
func (f *jujuFront) viaFixpoint(cmd *cobra.Command, mk func() *cobra.Command, args []string) error {
	c, err := f.checkedClient(cmd.Context())
	if err != nil {
		return err
	}
	fc := mk()
	fc.SetArgs(append(args, "--env", c.EnvName()))
	fc.SetOut(cmd.OutOrStdout())
	fc.SetErr(cmd.ErrOrStderr())
	fc.SilenceErrors, fc.SilenceUsage = true, true
	return fc.ExecuteContext(cmd.Context())
}

// refuseFlags refuses the Juju flags of cmd that fixpoint has no
// counterpart for, naming them.
func refuseFlags(cmd *cobra.Command, why string, names ...string) error {
	var set []string
	for _, n := range names {
		if cmd.Flags().Changed(n) {
			set = append(set, "--"+n)
		}
	}
	if len(set) == 0 {
		return nil
	}
	return exitf(exitFailed, "juju %s %s: not supported by fixpoint (%s); leave %s out", cmd.Name(), strings.Join(set, " "), why, strings.Join(set, " "))
}

func (f *jujuFront) deployCmd() *cobra.Command {
	var n, revision int
	var configs, resources, to []string
	var channel string
	var trust bool
	cmd := &cobra.Command{
		Use:   "deploy CHARM [APP] [--num-units N] [--config K=V] [--resource R=PATH] [--trust] [--to M]",
		Short: "Add an application to the model, as fixpoint deploy does",
		Long: `deploy adds APP running CHARM (a directory, a .charm archive, or a NAME in
the charm repository, $FIXPOINT_CHARM_REPO) to the environment and applies
it: fixpoint deploy, with Juju's flags.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := refuseFlags(cmd, "fixpoint has no machine bases, constraints, spaces, storage directives, overlays or storage attachments to place by", "base", "constraints", "bind", "storage", "overlay", "attach-storage", "force"); err != nil {
				return err
			}
			fa := append([]string{}, args...)
			if cmd.Flags().Changed("num-units") {
				// Left out otherwise: a subordinate charm refuses -n.
				fa = append(fa, "-n", strconv.Itoa(n))
			}
			for _, c := range configs {
				fa = append(fa, "--config", c)
			}
			for _, r := range resources {
				fa = append(fa, "--resource", r)
			}
			if len(to) > 0 {
				fa = append(fa, "--to", strings.Join(to, ","))
			}
			if trust {
				fa = append(fa, "--trust")
			}
			if channel != "" {
				fa = append(fa, "--channel", jujuChannel(channel))
			}
			if cmd.Flags().Changed("revision") {
				fa = append(fa, "--revision", strconv.Itoa(revision))
			}
			return f.viaFixpoint(cmd, newDeployCmd, fa)
		},
	}
	cmd.Flags().IntVarP(&n, "num-units", "n", 1, "how many units")
	cmd.Flags().StringArrayVar(&configs, "config", nil, "KEY=VALUE, or a YAML file of options (repeatable)")
	cmd.Flags().StringArrayVar(&resources, "resource", nil, "NAME=PATH of a resource (repeatable)")
	cmd.Flags().StringSliceVar(&to, "to", nil, "machines to place the units on")
	cmd.Flags().BoolVar(&trust, "trust", false, "let the units read the environment's cloud credential")
	cmd.Flags().StringVar(&channel, "channel", "", "the charm store channel to record (status shows it); the charm is found by name")
	cmd.Flags().IntVar(&revision, "revision", 0, "the charm store revision to record, with --channel")
	for _, name := range []string{"base", "constraints", "bind", "overlay", "attach-storage"} {
		cmd.Flags().String(name, "", "not supported by fixpoint")
	}
	cmd.Flags().StringArray("storage", nil, "not supported by fixpoint")
	cmd.Flags().Bool("force", false, "not supported by fixpoint")
	return cmd
}

func (f *jujuFront) addUnitCmd() *cobra.Command {
	var n int
	cmd := &cobra.Command{
		Use:   "add-unit APP [--num-units N]",
		Short: "Add units to an application, as fixpoint add-unit does",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := refuseFlags(cmd, "a unit's machine comes from the application's placement", "to", "attach-storage"); err != nil {
				return err
			}
			return f.viaFixpoint(cmd, newAddUnitCmd, []string{args[0], "-n", strconv.Itoa(n)})
		},
	}
	cmd.Flags().IntVarP(&n, "num-units", "n", 1, "how many units to add")
	cmd.Flags().String("to", "", "not supported by fixpoint")
	cmd.Flags().String("attach-storage", "", "not supported by fixpoint")
	return cmd
}

// removeCmd is juju remove-unit or remove-application: fixpoint's command
// of the same effect, --no-prompt being its --yes.
func (f *jujuFront) removeCmd(use, short string, mk func() *cobra.Command) *cobra.Command {
	var noPrompt bool
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := refuseFlags(cmd, "fixpoint removes what the environment no longer declares, storage with it", "destroy-storage", "force", "num-units"); err != nil {
				return err
			}
			fa := append([]string{}, args...)
			if noPrompt {
				fa = append(fa, "--yes")
			}
			err := f.viaFixpoint(cmd, mk, fa)
			var ee *exitError
			if errors.As(err, &ee) {
				// Juju's word for fixpoint's --yes.
				ee.msg = strings.ReplaceAll(ee.msg, "--yes", "--no-prompt")
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&noPrompt, "no-prompt", false, "remove without asking")
	cmd.Flags().Bool("destroy-storage", false, "not supported by fixpoint")
	cmd.Flags().Bool("force", false, "not supported by fixpoint")
	cmd.Flags().Int("num-units", 0, "not supported by fixpoint")
	return cmd
}

func (f *jujuFront) integrateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "integrate APP[:ENDPOINT] APP[:ENDPOINT]",
		Aliases: []string{"relate"},
		Short:   "Relate two applications, as fixpoint relate does",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := refuseFlags(cmd, "fixpoint has no cross-model relations", "via"); err != nil {
				return err
			}
			return f.viaFixpoint(cmd, newRelateCmd, args)
		},
	}
	cmd.Flags().String("via", "", "not supported by fixpoint")
	return cmd
}

func (f *jujuFront) removeRelationCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "remove-relation APP[:ENDPOINT] APP[:ENDPOINT]",
		Short: "Remove a relation, as fixpoint unrelate does",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.viaFixpoint(cmd, newUnrelateCmd, args)
		},
	}
}

// setConfigVia is juju config APP KEY=VALUE... [--reset K,...]: fixpoint
// config's edit.
func (f *jujuFront) setConfigVia(cmd *cobra.Command, app string, pairs, reset []string) error {
	fa := append([]string{app}, pairs...)
	if len(reset) > 0 {
		fa = append(fa, "--reset", strings.Join(reset, ","))
	}
	return f.viaFixpoint(cmd, newConfigCmd, fa)
}

// jujuChannel is channel as Juju records it: a risk alone ("beta") is the
// latest track's, a track alone ("3.1") its stable risk.
func jujuChannel(channel string) string {
	if channel == "" || strings.Contains(channel, "/") {
		return channel
	}
	switch channel {
	case "stable", "candidate", "beta", "edge":
		return "latest/" + channel
	}
	return channel + "/stable"
}

// editService makes one edit of application app's declaration in the
// model --model names, applied as fixpoint's edits are; it prints nothing,
// as Juju's expose and trust do.
func (f *jujuFront) editService(cmd *cobra.Command, app string, change func(spec *model.ServiceSpec)) error {
	return f.editModel(cmd.Context(), &edit{what: cmd.Name() + " " + app,
		change: func(_ context.Context, _ *api.EnvDoc, env *model.Environment) error {
			spec, ok := env.Services[app]
			if !ok {
				return exitf(exitFailed, "application %q not found (not found): the model's applications are %s", app, listNames(env.Services))
			}
			change(&spec)
			env.Services[app] = spec
			return nil
		}})
}

func (f *jujuFront) exposeCmd(expose bool) *cobra.Command {
	use, short := "expose APP", "Record an application as exposed (shown in juju status; fixpoint opens no firewall)"
	if !expose {
		use, short = "unexpose APP", "Record an application as no longer exposed"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := refuseFlags(cmd, "fixpoint records an application's exposure as a whole, not by endpoint, space or CIDR", "endpoints", "to-spaces", "to-cidrs"); err != nil {
				return err
			}
			return f.editService(cmd, args[0], func(spec *model.ServiceSpec) { spec.Expose = expose })
		},
	}
	cmd.Flags().String("endpoints", "", "not supported by fixpoint")
	if expose {
		cmd.Flags().String("to-spaces", "", "not supported by fixpoint")
		cmd.Flags().String("to-cidrs", "", "not supported by fixpoint")
	}
	return cmd
}

func (f *jujuFront) trustCmd() *cobra.Command {
	var remove bool
	var scope string
	cmd := &cobra.Command{
		Use:   "trust APP [--remove]",
		Short: "Let an application's units read the model's cloud credential (credential-get), or stop them",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if scope != "" && scope != "cluster" {
				return exitf(exitFailed, "juju trust --scope %s: not supported by fixpoint (trust is the credential's, as Juju's cluster scope); leave --scope out", scope)
			}
			return f.editService(cmd, args[0], func(spec *model.ServiceSpec) { spec.Trust = !remove })
		},
	}
	cmd.Flags().BoolVar(&remove, "remove", false, "take the trust away")
	cmd.Flags().StringVar(&scope, "scope", "", "cluster (the only scope fixpoint has)")
	return cmd
}
