package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/api"
)

func newMachineCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "machine",
		Short: "Manage registered machines' identities",
		Long: `A machine is registered once with the join token; its agent then holds the
machine's own credential (agent.token in its data dir) and only that renews
the registration. When an agent lost its credential (a wiped data dir, a
replaced host), the operator resets the machine so that it can register with
the join token again; status then shows that its credential was replaced.`,
	}
	cmd.AddCommand(newMachineResetCmd("reset", false), newMachineResetCmd("forget", true))
	return cmd
}

func newMachineResetCmd(verb string, forget bool) *cobra.Command {
	var r remote
	short, long := "Drop a machine's credential so its agent can register again with the join token",
		`reset drops the machine's credential: its current agent is refused from
now on, and the next agent that registers the machine with the join token
gets a new credential. Its units stay where they are.`
	if forget {
		short, long = "Remove a machine and its credential",
			`forget removes the machine's registration and credential, for a machine
that is gone for good. Its units stay placed on it and wait until a machine of
that name registers again (with the join token) or the environment moves them.`
	}
	cmd := &cobra.Command{
		Use:     verb + " MACHINE",
		Short:   short,
		Long:    long,
		Example: "  fixpoint machine " + verb + " m1",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := r.client()
			if err != nil {
				return err
			}
			if _, err := c.ResetMachine(cmd.Context(), args[0], forget); err != nil {
				return exitf(exitFailed, "machine %s %s: %v", verb, args[0], err)
			}
			if forget {
				fmt.Fprintf(os.Stdout, "machine %s forgotten\n", args[0])
			} else {
				fmt.Fprintf(os.Stdout, "machine %s reset: its next registration with the join token gets a new credential\n", args[0])
			}
			return nil
		},
	}
	r.flags(cmd)
	return cmd
}

func newTokenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Rotate or revoke the join token; create, list and revoke environment tokens",
	}
	var (
		r       remote
		expires time.Duration
	)
	rotate := &cobra.Command{
		Use:   "rotate join",
		Short: "Replace the join token; the old one stops working at once",
		Long: `rotate join makes a new join token and prints it. The old one is refused
from now on; machines already registered keep working (they use their own
credentials). With --expires the new token also stops working after that
long. The token is made here and only its hash is sent. When --data-dir is a
control-plane node's, its join.token file is replaced too.`,
		Example: `  fixpoint token rotate join --expires 1h`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != "join" {
				return exitf(exitFailed, "only the join token rotates this way, not %q", args[0])
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			tok := api.NewToken()
			var until time.Time
			if expires > 0 {
				until = time.Now().Add(expires)
			}
			if _, err := c.SetJoinToken(cmd.Context(), api.HashToken(tok), until); err != nil {
				return exitf(exitFailed, "rotate the join token: %v", err)
			}
			if err := replaceLocalJoinToken(r.dataDir, tok); err != nil {
				fmt.Fprintf(os.Stderr, "warning: the join token changed, but %v\n", err)
			}
			fmt.Fprintln(os.Stdout, tok)
			if !until.IsZero() {
				fmt.Fprintf(os.Stderr, "the join token expires at %s\n", until.UTC().Format(time.RFC3339))
			}
			return nil
		},
	}
	r.flags(rotate)
	rotate.Flags().DurationVar(&expires, "expires", 0, "how long the new token is accepted (default: until rotated again)")
	var (
		rr  remote
		env string
	)
	revoke := &cobra.Command{
		Use:   "revoke join | revoke [--env NAME] TOKEN",
		Short: "Refuse new machine registrations (join), or revoke an environment token",
		Long: `revoke join refuses every new machine registration until the join token is
rotated. revoke TOKEN revokes the environment token of that name (in --env,
the default environment without) or of that id (` + "`fixpoint token list`" + `); a token
of the default environment named join is revoked by its id.`,
		Example: "  fixpoint token revoke join\n  fixpoint token revoke --env staging dashboard",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != "join" || cmd.Flags().Changed("env") {
				return revokeEnvToken(cmd, &rr, env, args[0])
			}
			c, err := rr.client()
			if err != nil {
				return err
			}
			if _, err := c.SetJoinToken(cmd.Context(), "", time.Time{}); err != nil {
				return exitf(exitFailed, "revoke the join token: %v", err)
			}
			fmt.Fprintln(os.Stdout, "join token revoked: no machine can register until `fixpoint token rotate join`")
			return nil
		},
	}
	rr.flags(revoke)
	revoke.Flags().StringVar(&env, "env", "", "the environment of the token to revoke (default: the default environment)")
	cmd.AddCommand(rotate, revoke, newTokenCreateCmd(), newTokenListCmd())
	return cmd
}

// replaceLocalJoinToken updates the join token a node keeps in dataDir,
// if there is one, so that its files say what the control plane accepts.
func replaceLocalJoinToken(dataDir, tok string) error {
	path := filepath.Join(dataDir, joinTokenFile)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(tok+"\n"), 0o600); err != nil {
		return fmt.Errorf("%s was not updated: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("%s was not updated: %w", path, err)
	}
	return nil
}
