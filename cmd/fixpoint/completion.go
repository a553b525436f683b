package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func newCompletionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print a shell completion script",
		Long: `completion prints a script that makes your shell complete fixpoint's
commands, flags and arguments — unit and service names too, asked of the
running control plane (found like status finds it: --controller,
$FIXPOINT_ADDR or --data-dir).

  bash: source <(fixpoint completion bash)
        or, for every session: fixpoint completion bash > /etc/bash_completion.d/fixpoint
  zsh:  fixpoint completion zsh > "${fpath[1]}/_fixpoint"   (with compinit enabled)
  fish: fixpoint completion fish > ~/.config/fish/completions/fixpoint.fish`,
		Example: `  source <(fixpoint completion bash)
  fixpoint completion zsh > ~/.zfunc/_fixpoint
  fixpoint completion fish | source`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		RunE: func(cmd *cobra.Command, args []string) error {
			root, out := cmd.Root(), cmd.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			case "fish":
				return root.GenFishCompletion(out, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(out)
			}
			return exitf(exitFailed, "no completion for shell %q: use bash, zsh, fish or powershell", args[0])
		},
	}
	return cmd
}

// wireCompletions completes the arguments and flags of commands defined
// elsewhere: units for the commands that take one, .cue files for -f, a
// directory for --data-dir. A command group without examples of its own
// gets the first example of each of its commands.
func wireCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Example == "" && c.HasAvailableSubCommands() && c != root {
			var ex []string
			for _, sub := range c.Commands() {
				if first, _, _ := strings.Cut(sub.Example, "\n"); first != "" && !sub.Hidden {
					ex = append(ex, first)
				}
			}
			c.Example = strings.Join(ex, "\n")
		}
		switch c.CommandPath() {
		case "fixpoint debug explain":
			if c.ValidArgsFunction == nil {
				c.ValidArgsFunction = completeUnits
			}
		case "fixpoint resolved":
			if c.ValidArgsFunction == nil {
				c.ValidArgsFunction = completeUnitsAndServices
			}
		}
		if c.Flags().Lookup("file") != nil {
			_ = c.MarkFlagFilename("file", "cue")
		}
		if c.Flags().Lookup("data-dir") != nil {
			_ = c.MarkFlagDirname("data-dir")
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completeUnits completes one unit name from the running control plane.
func completeUnits(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return names(cmd, toComplete, true, false), cobra.ShellCompDirectiveNoFileComp
}

// completeServices completes one service name.
func completeServices(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return names(cmd, toComplete, false, true), cobra.ShellCompDirectiveNoFileComp
}

// completeUnitsAndServices completes unit and service names.
func completeUnitsAndServices(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if (cmd.Name() == "logs" || cmd.Name() == "resolved") && len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return names(cmd, toComplete, true, true), cobra.ShellCompDirectiveNoFileComp
}

// names asks the control plane, briefly, for the units and/or services
// starting with prefix, each unit with its phase as the description.
// Nothing is offered when it does not answer.
func names(cmd *cobra.Command, prefix string, units, services bool) []string {
	var r remote
	r.controller, _ = cmd.Flags().GetString("controller")
	r.dataDir, _ = cmd.Flags().GetString("data-dir")
	if r.dataDir == "" {
		r.dataDir = defaultDataDir
	}
	// The environment the command would use: -e, $FIXPOINT_ENV, the
	// context's.
	if f := cmd.Flags().Lookup("env"); f != nil {
		r.env, r.envScoped, r.fs = f.Value.String(), true, cmd.Flags()
	}
	c, err := r.client()
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := c.Status(ctx, true, 0, 0)
	if err != nil {
		return nil
	}
	var out []string
	if services {
		for name, s := range st.Services {
			if strings.HasPrefix(name, prefix) {
				out = append(out, fmt.Sprintf("%s\tservice, %d units", name, s.Units))
			}
		}
	}
	for name, u := range st.Units {
		if units && strings.HasPrefix(name, prefix) {
			out = append(out, fmt.Sprintf("%s\t%s %s", name, u.Phase, u.Status.State))
		}
	}
	sort.Strings(out)
	return out
}
