package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/cmd/fixpoint/internal/juju"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// The juju front's secrets and debug-log.

func (f *jujuFront) secretsCmd() *cobra.Command {
	var format, owner string
	var revisions bool
	cmd := &cobra.Command{
		Use:     "secrets [--owner OWNER] [--format tabular|json|yaml]",
		Aliases: []string{"list-secrets"},
		Short:   "List the secrets, as juju secrets does; never their values",
		Long: `secrets lists every secret of the model, keyed by its id, as juju secrets
does: latest revision, owner (an application, a unit, or <model> for a user
secret), label or name, rotation and expiry. --owner keeps one owner's
(an application or unit name, or its tag: application-web, unit-web-0).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkJujuFormat("secrets", format, "tabular", "json", "yaml"); err != nil {
				return err
			}
			c, env, err := f.modelClient(cmd.Context(), "")
			if err != nil {
				return err
			}
			list, err := c.Secrets(cmd.Context())
			if err != nil {
				return exitf(exitFailed, "secrets: %v", err)
			}
			want := ownerName(owner)
			out := map[string]juju.Secret{}
			for _, s := range list {
				d := juju.SecretDetails(s, env.Name, nil, revisions)
				if want != "" && d.Owner != want {
					continue
				}
				out[juju.BareID(s.ID)] = d
			}
			if format != "tabular" {
				return writeJuju(cmd.OutOrStdout(), out, format)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tName\tOwner\tRotation\tRevision")
			for _, id := range sortedKeys(out) {
				s := out[id]
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", id, orDash(s.Name), s.Owner, orDash(s.Rotation), s.Revision)
			}
			return tw.Flush()
		},
	}
	jujuFormat(cmd, &format, "tabular", "tabular", "json", "yaml")
	cmd.Flags().StringVar(&owner, "owner", "", "only the secrets of this owner")
	cmd.Flags().BoolVar(&revisions, "revisions", false, "list each secret's revisions")
	return cmd
}

// ownerName is an owner as juju secrets shows it, from a name or a tag:
// "application-web" is web, "unit-web-0" web/0.
func ownerName(owner string) string {
	if app, ok := strings.CutPrefix(owner, "application-"); ok {
		return app
	}
	if unit, ok := strings.CutPrefix(owner, "unit-"); ok {
		if i := strings.LastIndexByte(unit, '-'); i > 0 {
			return unit[:i] + "/" + unit[i+1:]
		}
	}
	return owner
}

func (f *jujuFront) showSecretCmd() *cobra.Command {
	var format string
	var reveal, revisions bool
	var revision int
	cmd := &cobra.Command{
		Use:   "show-secret ID|NAME [--reveal] [--revisions] [--revision N] [--format json|yaml]",
		Short: "Show one secret; --reveal shows its value (logged by the control plane)",
		Long: `show-secret prints one secret as juju show-secret does, keyed by its id; a
user secret may be named by its name. --reveal adds the latest revision's
content (or --revision N's) under content.Data; the control plane opens
it with its cluster key for the operator credential only and logs that it
did. --revisions lists the kept revisions.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkJujuFormat("show-secret", format, "yaml", "json"); err != nil {
				return err
			}
			if revisions && (reveal || revision > 0) {
				return &exitError{code: exitUsage, msg: "specify either --revisions or --reveal/--revision, not both"}
			}
			ctx := cmd.Context()
			c, st, err := f.clientAndModel(ctx, f.model, false)
			if err != nil {
				return err
			}
			id := secretID(st, args[0])
			if id == "" {
				return exitf(exitFailed, "secret %q not found (not found)", args[0])
			}
			c.SetReveal(reveal || revision > 0)
			s, err := c.Secret(ctx, id, revisions || revision > 0)
			if errors.Is(err, api.ErrNotFound) {
				return exitf(exitFailed, "secret %q not found (not found)", args[0])
			}
			if err != nil {
				return exitf(exitFailed, "show-secret %s: %v", args[0], err)
			}
			if revision > 0 {
				if err := pickRevision(s, revision); err != nil {
					return err
				}
			}
			tag := func(rel int) string {
				var eps []string
				if r := st.Relations[rel]; r != nil {
					for _, e := range r.Endpoints {
						eps = append(eps, e.Service+":"+e.Name)
					}
				}
				return juju.RelationTag(rel, eps)
			}
			d := juju.SecretDetails(s, st.Name, tag, revisions)
			return writeJuju(cmd.OutOrStdout(), map[string]juju.Secret{juju.BareID(s.ID): d}, format)
		},
	}
	jujuFormat(cmd, &format, "yaml", "yaml", "json")
	cmd.Flags().BoolVar(&reveal, "reveal", false, "show the secret's content (operator only; the control plane logs it)")
	cmd.Flags().BoolVar(&revisions, "revisions", false, "list the kept revisions")
	cmd.Flags().IntVarP(&revision, "revision", "r", 0, "the revision to show the content of (with --reveal)")
	return cmd
}

// secretID is the id of the secret ref names in st: an id or URI, or a
// user secret's name; "" when none.
func secretID(st *model.State, ref string) string {
	if id, err := model.ParseSecretURI(ref); err == nil && st.Secrets[id] != nil {
		return id
	}
	for id, s := range st.Secrets {
		if s.OwnerKind == model.SecretOwnerUser && s.Label == ref {
			return id
		}
	}
	return ""
}

// pickRevision makes s's content revision rev's.
func pickRevision(s *api.SecretInfo, rev int) error {
	for _, r := range s.Revisions {
		if r.Revision == rev {
			s.Revision, s.Content, s.Revisions = rev, r.Content, nil
			return nil
		}
	}
	return exitf(exitFailed, "secret %s has no revision %d (it keeps %s)", s.ID, rev, keptRevisions(s))
}

func keptRevisions(s *api.SecretInfo) string {
	var out []string
	for _, r := range s.Revisions {
		out = append(out, strconv.Itoa(r.Revision))
	}
	return strings.Join(out, ", ")
}

func (f *jujuFront) debugLogCmd() *cobra.Command {
	var flt model.LogFilter
	var limit, lines int
	var replay, tail, noTail, utc bool
	cmd := &cobra.Command{
		Use:   "debug-log [--limit N] [--replay] [--include ENTITY] [--level LEVEL]",
		Short: "Print the model's log, as juju debug-log does",
		Long: `debug-log prints the debug log as juju debug-log does ("unit-web-0:
12:00:01 INFO juju.hook message"). --limit N prints the last N lines
(0: every line kept) and returns; without it the last -n lines (10)
are printed. --replay prints every line kept. --tail keeps printing new
lines; without it the command returns once it printed what is kept, as
juju does when its output is not a terminal. --include and --exclude take
units, applications and machines (unit-web-0 or web/0).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flt.Include, flt.Exclude = entityNames(flt.Include), entityNames(flt.Exclude)
			flt.Level = strings.ToLower(flt.Level)
			if flt.Level == "warn" {
				flt.Level = "warning"
			}
			if err := flt.Check(); err != nil {
				return exitf(exitFailed, "debug-log: %v", err)
			}
			c, err := f.checkedClient(cmd.Context())
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			out, loc := cmd.OutOrStdout(), timeZone(utc)
			print := func(ls []model.LogLine) {
				for i := range ls {
					l := &ls[i]
					fmt.Fprintf(out, "%s: %s %s juju.%s %s\n", logEntity(l), time.Unix(0, l.Time).In(loc).Format("15:04:05"),
						strings.ToUpper(l.Level), l.Origin, escapeControl(l.Message, false))
				}
			}
			n := lines
			if cmd.Flags().Changed("limit") {
				n = limit
			}
			q := api.DebugLogQuery{Filter: flt}
			last, err := readDebugLog(ctx, c, q, replay || n == 0 && cmd.Flags().Changed("limit"), n, print)
			if err != nil {
				return exitf(exitFailed, "debug-log: %v", err)
			}
			if !tail || noTail || cmd.Flags().Changed("limit") {
				return nil
			}
			return followDebugLog(ctx, c, q, last, print, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "print the last N lines and return (0: every line kept)")
	cmd.Flags().IntVarP(&lines, "lines", "n", 10, "how many of the last lines to print first")
	cmd.Flags().BoolVar(&replay, "replay", false, "print every line kept")
	cmd.Flags().BoolVar(&tail, "tail", false, "keep printing new lines")
	cmd.Flags().BoolVar(&noTail, "no-tail", false, "return once the lines kept are printed (the default)")
	cmd.Flags().StringSliceVarP(&flt.Include, "include", "i", nil, "only these units, applications or machines")
	cmd.Flags().StringSliceVarP(&flt.Exclude, "exclude", "x", nil, "leave out these units, applications or machines")
	cmd.Flags().StringVarP(&flt.Level, "level", "l", "", "only this level and above: DEBUG, INFO, WARNING, ERROR")
	cmd.Flags().BoolVar(&utc, "utc", false, "print times in UTC")
	return cmd
}

// entityNames turns Juju's tags (unit-web-0, application-web,
// machine-0) into the names fixpoint's filter takes.
func entityNames(in []string) []string {
	out := make([]string, 0, len(in))
	for _, e := range in {
		switch {
		case strings.HasPrefix(e, "unit-"), strings.HasPrefix(e, "application-"):
			e = ownerName(e)
		case strings.HasPrefix(e, "machine-"):
			e = strings.TrimPrefix(e, "machine-")
		}
		out = append(out, e)
	}
	return out
}

// logEntity is a line's source as a Juju tag: unit-web-0, machine-m1,
// controller-n1.
func logEntity(l *model.LogLine) string {
	switch {
	case l.Unit != "":
		return "unit-" + strings.ReplaceAll(l.Unit, "/", "-")
	case l.Machine != "":
		return "machine-" + l.Machine
	}
	return "controller-" + l.Node
}
