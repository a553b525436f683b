package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/api"
)

// Environment tokens: made by the cluster's operator, each opens one
// environment as its operator or its reader. The token is shown once;
// the cluster keeps its hash.

func newTokenCreateCmd() *cobra.Command {
	var (
		r   remote
		req api.NewEnvToken
	)
	cmd := &cobra.Command{
		Use:   "create --role operator|reader [--env NAME] [--name NAME]",
		Short: "Make a token that opens one environment, as its operator or its reader",
		Long: `create makes an environment token and prints it once; the cluster keeps only
its hash. An operator token does everything of its environment (deploys,
resolved, run, exec, --reveal); a reader token only reads it, never a
secret's value. Neither opens another environment or anything of the
cluster's (machines, join tokens, membership, environments). Without --env
the token is the default environment's.`,
		Example: `  fixpoint token create --env staging --role reader --name dashboard`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if req.Role != "operator" && req.Role != "reader" {
				return exitf(exitFailed, "token create: --role %q: pass --role operator or --role reader", req.Role)
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			got, err := c.CreateToken(cmd.Context(), req)
			if err != nil {
				return exitf(exitFailed, "token create: %v", err)
			}
			fmt.Fprintln(os.Stdout, got.Token)
			fmt.Fprintf(os.Stderr, "token %s (id %s, %s of %s): keep it now, it is not shown again; revoke it with `fixpoint token revoke%s %s`\n",
				got.Name, got.ID, got.Role, envOrDefault(req.Env), envFlagOf(req.Env), got.Name)
			return nil
		},
	}
	r.flags(cmd)
	cmd.Flags().StringVar(&req.Env, "env", "", "the environment the token opens (default: the default environment)")
	cmd.Flags().StringVar(&req.Role, "role", "", "operator or reader")
	cmd.Flags().StringVar(&req.Name, "name", "", "the token's name, unique in its environment (default: ROLE-DATE-TIME)")
	return cmd
}

func newTokenListCmd() *cobra.Command {
	var (
		r      remote
		env    string
		format string
	)
	cmd := &cobra.Command{
		Use:     "list [--env NAME]",
		Short:   "List environment tokens (their names and ids, never the tokens)",
		Example: "  fixpoint token list --env staging",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			list, err := c.Tokens(cmd.Context(), env, !cmd.Flags().Changed("env"))
			if err != nil {
				return exitf(exitFailed, "token list: %v", err)
			}
			switch format {
			case "json":
				return writeJSONStatus(os.Stdout, list, false)
			case "yaml":
				return writeYAML(os.Stdout, list)
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ENV\tNAME\tROLE\tID\tCREATED")
			for _, t := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", orDash(t.Env), t.Name, t.Role, t.ID, t.Created)
			}
			return tw.Flush()
		},
	}
	r.flags(cmd)
	cmd.Flags().StringVar(&env, "env", "", "list this environment's tokens alone")
	formatFlag(cmd, &format)
	return cmd
}

// revokeEnvToken revokes the environment token named (or whose id is)
// ref in env.
func revokeEnvToken(cmd *cobra.Command, r *remote, env, ref string) error {
	c, err := r.client()
	if err != nil {
		return err
	}
	if err := c.RevokeToken(cmd.Context(), env, ref); err != nil {
		return exitf(exitFailed, "token revoke %s: %v", ref, err)
	}
	fmt.Fprintf(os.Stdout, "token %s of %s revoked\n", ref, envOrDefault(env))
	return nil
}

func envOrDefault(env string) string {
	if env == "" {
		return "the default environment"
	}
	return "environment " + env
}

func envFlagOf(env string) string {
	if env == "" {
		return ""
	}
	return " --env " + env
}
