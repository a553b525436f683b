package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
)

func newLogsCmd() *cobra.Command {
	var r remote
	var follow bool
	var tail int
	var format string
	cmd := &cobra.Command{
		Use:   "logs [UNIT|SERVICE]",
		Short: "Show the recent hook runs of a unit: when, on which universe, how long, what changed",
		Long: `logs shows the reconcile history of a unit (or of every unit of a service, or
of the whole environment): for each hook run, when it was reported, the hash
of the universe it was given, how long it took, its outcome (ok, error, or
stale when the universe moved on while it ran), what its result changed in
the unit's settings, status and state, and the tail of its stderr.

The leader keeps the last 50 runs of each unit in memory; a new leader starts
an empty history. With --follow, logs waits for new runs and prints them as
they come, until interrupted.

Secret values (config options of type secret; relation, application and
leader keys named like password, secret, token, key or credential) are shown
as <redacted sha256:…>, a prefix of their hash; --reveal shows them, to the
operator credential only.`,
		Example: `  fixpoint logs web/0
  fixpoint logs db --tail 5
  fixpoint logs --follow
  fixpoint logs web/1 --format json | jq -r .stderr`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeUnitsAndServices,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkStreamFormat(format); err != nil {
				return err
			}
			unit := ""
			if len(args) == 1 {
				unit = args[0]
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			out := cmd.OutOrStdout()
			print := func(runs []engine.Run) {
				for _, run := range runs {
					if format == "json" {
						_ = writeJSONStatus(out, run, true)
					} else {
						printRun(out, run, unit)
					}
				}
			}
			logs, err := c.Logs(ctx, unit, 0, tail, 0)
			if err != nil {
				return exitf(exitFailed, "logs: %v", err)
			}
			if len(logs.Runs) == 0 && !follow && format == "text" {
				what := "any unit"
				if unit != "" {
					what = unit
				}
				fmt.Fprintf(out, "no hook runs of %s in the leader's history (it keeps the last %d per unit since it became leader)\n", what, engine.DefaultHistory)
			}
			print(logs.Runs)
			if !follow {
				return nil
			}
			return followLogs(ctx, c, unit, logs.Seq, print, cmd.ErrOrStderr())
		},
	}
	r.flags(cmd)
	r.envFlag(cmd)
	r.revealFlag(cmd)
	cmd.Flags().BoolVar(&follow, "follow", false, "keep printing new runs as they are reported")
	cmd.Flags().IntVarP(&tail, "tail", "n", 0, "show only the last N runs (0: all kept)")
	cmd.Flags().StringVarP(&format, "format", "o", "text", "output format: text, or json (one run per line)")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// followLogs long-polls for runs after seq until ctx ends, riding out
// leader changes and unreachable nodes.
func followLogs(ctx context.Context, c *api.Client, unit string, seq uint64, print func([]engine.Run), errw io.Writer) error {
	failures := 0
	for ctx.Err() == nil {
		logs, err := c.Logs(ctx, unit, seq, 0, 30*time.Second)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			// An answer that retrying can not change ends the follow.
			if ae := (*api.Error)(nil); errors.As(err, &ae) && !ae.Kind.Retryable() {
				return exitf(exitFailed, "logs: %v", err)
			}
			failures++
			d := time.Duration(min(failures, 5)) * time.Second
			fmt.Fprintf(errw, "fixpoint: logs: %v; retrying in %s\n", err, d)
			select {
			case <-ctx.Done():
			case <-time.After(d):
			}
			continue
		}
		failures = 0
		if logs.Reset {
			fmt.Fprintln(errw, "fixpoint: logs: the history started over (the control plane has a new leader)")
		}
		print(logs.Runs)
		seq = logs.Seq
	}
	return nil
}

// printRun prints one run: a header line, then what changed, the error
// and the stderr tail, indented. The unit is left out when filter names it.
func printRun(w io.Writer, run engine.Run, filter string) {
	// Everything but the time comes from hooks and agents: escape it.
	unit := escapeControl(run.Unit, false) + "  "
	if filter == run.Unit {
		unit = ""
	}
	hash := escapeControl(run.Hash, false)
	if len(hash) > 12 {
		hash = hash[:12]
	}
	fmt.Fprintf(w, "%s  %s%-5s  %7s  universe %s\n", run.Time.Local().Format("2006-01-02 15:04:05.000"), unit, run.Outcome, roundDuration(run.Duration), orDash(hash))
	const indent = "    "
	switch run.Outcome {
	case engine.RunError:
		for _, l := range strings.Split(strings.TrimSpace(run.Error), "\n") {
			fmt.Fprintf(w, "%serror: %s\n", indent, escapeControl(l, false))
		}
	case engine.RunStale:
		fmt.Fprintf(w, "%sthe universe moved on while the hook ran: its result was dropped and it runs again\n", indent)
	case engine.RunOK:
		if len(run.Changes) == 0 {
			fmt.Fprintf(w, "%sno change: the result was what the unit already had\n", indent)
		}
	}
	for _, ch := range run.Changes {
		fmt.Fprintf(w, "%s%s\n", indent, escapeControl(ch.String(), false))
	}
	if run.Omitted > 0 {
		fmt.Fprintf(w, "%s... and %d more changes\n", indent, run.Omitted)
	}
	if run.Stderr != "" {
		for _, l := range strings.Split(run.Stderr, "\n") {
			fmt.Fprintf(w, "%sstderr| %s\n", indent, escapeControl(l, false))
		}
	}
}

func roundDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

// logLevels are the levels --log-level takes.
var logLevels = []string{"trace", "debug", "info", "warn", "error"}

// newLogger is the process's structured logger on stderr, as --log-level
// and --log-json ask: text for people, JSON lines for log pipelines.
func newLogger(name, level string, jsonFormat bool) (hclog.Logger, error) {
	return newFilteredLogger(name, level, jsonFormat, nil)
}

// newFilteredLogger is newLogger leaving out the lines exclude matches.
func newFilteredLogger(name, level string, jsonFormat bool, exclude func(hclog.Level, string, ...any) bool) (hclog.Logger, error) {
	lvl := hclog.LevelFromString(level)
	if lvl == hclog.NoLevel || lvl == hclog.Off {
		return nil, exitf(exitFailed, "--log-level %q: use %s", level, strings.Join(logLevels, ", "))
	}
	// An intercept logger, so that a node ships its lines to the debug
	// log (debuglog_node.go).
	return hclog.NewInterceptLogger(&hclog.LoggerOptions{
		Name:            name,
		Level:           lvl,
		JSONFormat:      jsonFormat,
		Output:          os.Stderr,
		IncludeLocation: lvl <= hclog.Debug,
		Exclude:         exclude,
	}), nil
}
