package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// allCommands walks the command tree, root included.
func allCommands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		out = append(out, allCommands(sub)...)
	}
	return out
}

// TestHelpOfEveryCommand renders the help of every command. pflag takes a
// backquoted word in a flag's usage as the name of its value, so `up` in
// a usage printed "--controller up"; no usage may have one. Every command
// that talks to a control plane documents --token, --token-file,
// $FIXPOINT_ADDR and $FIXPOINT_TOKEN, and every --format has -o.
func TestHelpOfEveryCommand(t *testing.T) {
	root := newRootCmd()
	cmds := allCommands(root)
	if len(cmds) < 30 {
		t.Fatalf("only %d commands found", len(cmds))
	}
	for _, c := range cmds {
		if c.Hidden || c.Name() == "help" {
			continue
		}
		var b bytes.Buffer
		c.SetOut(&b)
		c.SetErr(&b)
		if err := c.Help(); err != nil {
			t.Errorf("%s --help: %v", c.CommandPath(), err)
			continue
		}
		help := b.String()
		summary := c.Long
		if summary == "" {
			summary = c.Short
		}
		summary, _, _ = strings.Cut(summary, "\n")
		if !strings.Contains(help, "Usage:") || !strings.Contains(help, summary) {
			t.Errorf("%s --help lacks its usage or summary:\n%s", c.CommandPath(), help)
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if strings.Contains(f.Usage, "`") {
				name, _ := pflag.UnquoteUsage(f)
				t.Errorf("%s --%s: usage has a backquote, so help shows its value as %q: %s", c.CommandPath(), f.Name, name, f.Usage)
			}
			if f.Name == "format" && f.Shorthand != "o" {
				t.Errorf("%s --format has no -o", c.CommandPath())
			}
		})
		// The agent presents a join token of its own, not the operator's.
		if c.Flags().Lookup("controller") != nil && c.Name() != "agent" {
			for _, want := range []string{"--token ", "--token-file", "FIXPOINT_ADDR", "FIXPOINT_TOKEN"} {
				if !strings.Contains(help, want) {
					t.Errorf("%s --help does not mention %s:\n%s", c.CommandPath(), want, help)
				}
			}
		}
	}
}

// TestHelpShowsFlagTypes checks the rendered lines the issue named.
func TestHelpShowsFlagTypes(t *testing.T) {
	for _, args := range [][]string{{"status", "--help"}, {"agent", "--help"}, {"server", "--help"}} {
		root := newRootCmd()
		var b bytes.Buffer
		root.SetOut(&b)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(b.String(), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && (f[0] == "--controller" || f[0] == "--tls-cert") && f[1] != "string" {
				t.Errorf("%v: %q", args, line)
			}
		}
	}
}

// TestShorthandsMeanOneFlag holds every command to one meaning of each
// shorthand: -f was the environment file for up, plan and apply but
// --follow for logs.
func TestShorthandsMeanOneFlag(t *testing.T) {
	meaning := map[string]string{}
	where := map[string]string{}
	for _, c := range allCommands(newRootCmd()) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Shorthand == "" {
				return
			}
			if want, ok := shorthands[f.Shorthand]; ok && f.Name != want {
				t.Errorf("%s: -%s is --%s; in fixpoint -%s is --%s", c.CommandPath(), f.Shorthand, f.Name, f.Shorthand, want)
			}
			if m, ok := meaning[f.Shorthand]; ok && m != f.Name && !(f.Shorthand == "n" && countFlags[m] && countFlags[f.Name]) {
				t.Errorf("-%s is --%s in %s but --%s in %s", f.Shorthand, f.Name, c.CommandPath(), m, where[f.Shorthand])
			}
			meaning[f.Shorthand], where[f.Shorthand] = f.Name, c.CommandPath()
		})
	}
}

// TestRetiredShorthandSaysWhich: `logs -f` is refused with the flag it
// meant, not only "unknown shorthand".
func TestRetiredShorthandSaysWhich(t *testing.T) {
	root := newRootCmd()
	root.SetArgs([]string{"logs", "-f"})
	root.SetOut(&bytes.Buffer{})
	root.SetErr(&bytes.Buffer{})
	err := root.Execute()
	if err == nil || !strings.Contains(err.Error(), "did you mean --follow?") {
		t.Fatalf("logs -f: %v", err)
	}
}
