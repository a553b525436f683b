package main

import (
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
	var r remote
	cmd := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an emptied environment and revoke its tokens",
		Long: `remove drops an environment that runs nothing any more, and revokes its
tokens. One that still holds services or units is refused: deploy an empty
environment file of its name to it, wait until its units are gone, then
remove it.`,
		Example: "  fixpoint env remove staging",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := r.client()
			if err != nil {
				return err
			}
			if err := c.RemoveEnv(cmd.Context(), args[0]); err != nil {
				return exitf(exitFailed, "env remove %s: %v", args[0], err)
			}
			fmt.Fprintf(os.Stdout, "environment %s removed\n", args[0])
			return nil
		},
	}
	r.flags(cmd)
	return cmd
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
		name := e.Name
		if e.Default {
			if name == "" {
				name = "(unnamed)"
			}
			name += " (default)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", name, orDash(e.UUID), e.Services, e.Units, e.Created, orDash(strings.Join(e.Tokens, ",")))
	}
	return tw.Flush()
}
