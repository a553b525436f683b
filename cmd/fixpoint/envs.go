package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/api"
)

// Environments of one control plane (docs/environments.md): the cluster's
// operator adds, lists, shows and removes them, and makes their tokens.

func newEnvCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "env",
		Short: "Add, show and remove the cluster's environments",
		Long: `One control plane holds many environments, each with its own services,
units, relations and secrets, on the cluster's machines. The cluster's
operator token manages them; an environment's own tokens
(` + "`fixpoint token create --env NAME`" + `) open that environment alone.`,
	}
	cmd.AddCommand(newEnvAddCmd(), newEnvShowCmd(), newEnvRemoveCmd())
	return cmd
}

func newEnvAddCmd() *cobra.Command {
	var (
		r   remote
		req api.NewEnv
	)
	cmd := &cobra.Command{
		Use:     "add NAME",
		Short:   "Add an empty environment",
		Example: "  fixpoint env add staging --max-units 200",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := r.client()
			if err != nil {
				return err
			}
			req.Name = args[0]
			info, err := c.AddEnv(cmd.Context(), req)
			if err != nil {
				return exitf(exitFailed, "env add %s: %v", args[0], err)
			}
			fmt.Fprintf(os.Stdout, "environment %s added (uuid %s)\n", info.Name, info.UUID)
			return nil
		},
	}
	r.flags(cmd)
	cmd.Flags().IntVar(&req.MaxUnits, "max-units", 0, "most units the environment may run (default: the cluster's limit)")
	cmd.Flags().IntVar(&req.MaxServices, "max-services", 0, "most services the environment may hold (default: the cluster's limit)")
	return cmd
}

func newEnvShowCmd() *cobra.Command {
	var (
		r      remote
		format string
	)
	cmd := &cobra.Command{
		Use:     "show NAME",
		Short:   "Show one environment",
		Example: "  fixpoint env show staging",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			info, err := c.ShowEnv(cmd.Context(), args[0])
			if err != nil {
				return exitf(exitFailed, "env show %s: %v", args[0], err)
			}
			return printEnvs(os.Stdout, format, []api.EnvInfo{*info}, info)
		},
	}
	r.flags(cmd)
	formatFlag(cmd, &format)
	return cmd
}

func newEnvRemoveCmd() *cobra.Command {
	var (
		r          remote
		yes, force bool
	)
	cmd := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an environment: its units run their dying hooks, then it is dropped",
		Long: `remove takes an environment away: its units go dying and run their
dying hooks on their agents (stop, remove, relation-departed and -broken,
storage-detaching), then the environment is dropped with its tokens,
secrets and storage, and each agent removes its directory. It returns
once the environment is gone.

An environment that still holds services or units is removed only with
--yes (on a terminal, after you confirm); without it the exit code is 2
and nothing changes. --force drops the units left on lost machines
without their hooks, as Juju's destroy-model --force; units on machines
whose agents answer still run theirs.`,
		Example: "  fixpoint env remove staging --yes\n  fixpoint env remove staging --yes --force",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			c, err := r.client()
			if err != nil {
				return err
			}
			info, err := c.ShowEnv(cmd.Context(), name)
			if err != nil {
				return exitf(exitFailed, "env remove %s: %v", name, err)
			}
			if info.Default {
				return exitf(exitFailed, "env remove %s: it is the default environment, which is never removed; apply an environment file of its name with no services to remove what it runs", name)
			}
			if info.Units+info.Services > 0 && !yes {
				if err := confirmEnvRemove(newConfirm(false), name, info); err != nil {
					return err
				}
			}
			last := ""
			progress := func(left api.EnvRemoval) {
				line := fmt.Sprintf("environment %s: %d units, %d services and %d operations left", name, left.Units, left.Services, left.Operations)
				if len(left.Dying) > 0 {
					line += " (" + strings.Join(left.Dying, ", ") + ")"
				}
				if n := len(left.Lost); n > 0 && !force {
					line += fmt.Sprintf("; %d on lost machines wait for their agents (--force drops them without their hooks)", n)
				}
				if line != last {
					fmt.Fprintln(os.Stderr, line)
					last = line
				}
			}
			if err := c.RemoveEnvWith(cmd.Context(), name, api.RemoveEnvOptions{Force: force, Progress: progress}); err != nil {
				return exitf(exitFailed, "env remove %s: %v", name, err)
			}
			fmt.Fprintf(os.Stdout, "environment %s removed\n", name)
			return nil
		},
	}
	r.flags(cmd)
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "remove an environment that still holds services or units without asking")
	cmd.Flags().BoolVar(&force, "force", false, "drop the units left on lost machines without their hooks")
	return cmd
}

// confirmEnvRemove asks on a terminal whether to remove environment
// name, which holds what info counts, and refuses with exit 2 elsewhere,
// so that a script never removes what it did not confirm.
func confirmEnvRemove(g *confirmRemovals, name string, info *api.EnvInfo) error {
	what := fmt.Sprintf("environment %s with %d services and %d units", name, info.Services, info.Units)
	if !g.interactive {
		return exitf(exitChanges, "not removed: %s; pass --yes to remove it (its units run their dying hooks first)", what)
	}
	fmt.Fprintf(g.out, "This removes %s (their dying hooks run first). Remove? [y/N] ", what)
	line, _ := bufio.NewReader(g.in).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return exitf(exitChanges, "not removed: the removal of %s was not confirmed", what)
}

func newEnvsCmd() *cobra.Command {
	var (
		r      remote
		format string
	)
	cmd := &cobra.Command{
		Use:     "envs",
		Short:   "List the cluster's environments: name, uuid, services, units, units per phase, converged",
		Example: "  fixpoint envs -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			envs, err := c.Envs(cmd.Context())
			if err != nil {
				return exitf(exitFailed, "envs: %v", err)
			}
			return printEnvRows(os.Stdout, format, envRows(cmd.Context(), c, envs))
		},
	}
	r.flags(cmd)
	formatFlag(cmd, &format)
	return cmd
}

// printEnvs prints environments as a table, or v as json or yaml.
func printEnvs(w io.Writer, format string, envs []api.EnvInfo, v any) error {
	switch format {
	case "json":
		return writeJSONStatus(w, v, false)
	case "yaml":
		return writeYAML(w, v)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tUUID\tSERVICES\tUNITS\tCREATED\tTOKENS")
	for _, e := range envs {
		name := envLabel(e.Name, e.Default)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", name, orDash(e.UUID), e.Services, e.Units, e.Created, orDash(strings.Join(e.Tokens, ",")))
	}
	return tw.Flush()
}

// envLabel names an environment in a table: the default one says so, and
// is "(unnamed)" before a deploy names it.
func envLabel(name string, isDefault bool) string {
	if !isDefault {
		return name
	}
	if name == "" {
		name = "(unnamed)"
	}
	return name + " (default)"
}
