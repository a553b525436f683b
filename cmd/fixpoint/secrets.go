package main

import (
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// `fixpoint secrets` and `fixpoint show-secret`: the operator's view of
// the Juju secrets charms and the environment hold (GET /v1/secrets).

func newSecretsCmd() *cobra.Command {
	var r remote
	var format string
	cmd := &cobra.Command{
		Use:   "secrets",
		Short: "List the Juju secrets: owner, label, latest revision, grants; never their values",
		Long: `secrets lists every Juju secret the environment holds: the ones charms made
with secret-add and the user secrets of the environment file. It shows the
owner, the label, the latest revision, who was granted it and who reads
which revision. Values are never listed; show-secret ID --reveal shows one
secret's, to the operator credential only.`,
		Example: `  fixpoint secrets
  fixpoint secrets -o json | jq '.[].id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			list, err := c.Secrets(cmd.Context())
			if err != nil {
				return err
			}
			switch format {
			case "json":
				return writeJSONStatus(cmd.OutOrStdout(), list, false)
			case "yaml":
				return writeYAML(cmd.OutOrStdout(), list)
			}
			if len(list) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no secrets")
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tOWNER\tLABEL\tREVISION\tGRANTED TO\tCONSUMERS")
			for _, s := range list {
				var to, cons []string
				for _, g := range s.Grants {
					to = append(to, g.To)
				}
				for _, c := range s.Consumers {
					cons = append(cons, c.Unit+"@"+strconv.Itoa(c.Tracked))
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", s.ID, s.Owner, orDash(s.Label), s.Revision, orDash(strings.Join(to, ",")), orDash(strings.Join(cons, ",")))
			}
			return tw.Flush()
		},
	}
	r.flags(cmd)
	r.envFlag(cmd)
	formatFlag(cmd, &format)
	cmd.AddCommand(newRotateKeyCmd())
	return cmd
}

func newRotateKeyCmd() *cobra.Command {
	var r remote
	cmd := &cobra.Command{
		Use:   "rotate-key",
		Short: "Make a new cluster key and seal every secret again under it",
		Long: `rotate-key makes a new cluster key, replicates it to every server (sealed
under the current one, which they all hold) and seals every revision of
every secret again under it. Every server keeps the old keys too, to open
what the log still holds under them. Back up secrets.key again afterwards.`,
		Example: `  fixpoint secrets rotate-key
  fixpoint secrets rotate-key --controller 10.0.0.1:7070 --token-file operator.token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := r.client()
			if err != nil {
				return err
			}
			id, err := c.RotateSecretsKey(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cluster key %s is current; back up %s on a server again\n", id, "secrets.key")
			return nil
		},
	}
	r.flags(cmd)
	return cmd
}

func newShowSecretCmd() *cobra.Command {
	var r remote
	var format string
	var revisions bool
	cmd := &cobra.Command{
		Use:   "show-secret ID",
		Short: "Show one Juju secret; --reveal shows its value (operator only, logged)",
		Long: `show-secret prints one secret's owner, label, description, rotation and
expiry, grants and consumers; --revisions lists every kept revision.
Values are left out unless --reveal asks for them: the server opens them
with its cluster key, for the operator credential only, and logs that it
did.`,
		Example: `  fixpoint show-secret secret:cn0gqa6qs7s1bm0kfp8g
  fixpoint show-secret secret:cn0gqa6qs7s1bm0kfp8g --reveal --revisions -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format == "table" {
				format = "yaml"
			}
			if err := checkFormat(format); err != nil {
				return err
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			s, err := c.Secret(cmd.Context(), args[0], revisions)
			if err != nil {
				return err
			}
			if format == "json" {
				return writeJSONStatus(cmd.OutOrStdout(), s, false)
			}
			return writeYAML(cmd.OutOrStdout(), s)
		},
	}
	r.flags(cmd)
	r.envFlag(cmd)
	cmd.Flags().BoolVar(&r.reveal, "reveal", false, "show the secret's values; operator credential only, and the server logs it")
	cmd.Flags().BoolVar(&revisions, "revisions", false, "list every kept revision (with --reveal, each one's values)")
	cmd.Flags().StringVarP(&format, "format", "o", "yaml", "output format: yaml or json")
	return cmd
}
