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

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// isoTime is how debug-log and events print a time: ISO 8601, 24-hour,
// milliseconds, the local zone's offset.
const isoTime = "2006-01-02T15:04:05.000Z07:00"

func newDebugLogCmd() *cobra.Command {
	var r remote
	var f model.LogFilter
	var replay, follow bool
	var tail int
	var format string
	cmd := &cobra.Command{
		Use:   "debug-log",
		Short: "Show what hooks, agents and control-plane nodes log: filter, replay, follow",
		Long: `debug-log shows the debug log, as juju debug-log does: what hooks print on
stderr (an old hook's stdout too) and their juju-log lines, and what agents and
control-plane nodes log at info or above. Each line has its time (ISO 8601,
24-hour), its source (a unit, "machine M" or "node N"), its level and origin
(hook, juju-log, agent, node).

--include and --exclude take units (web/0), services (web), machines and
nodes, comma-separated or repeated; a unit's lines match its service and the
machine it ran on too. --level shows that level and above (debug, info,
warning, error). By default the last 100 lines are shown; --tail N shows the
last N, --replay everything kept, and --follow keeps printing new lines until
interrupted.

The debug log is replicated through the control plane's Raft log and kept by
every node, so it survives a leader change and a restart, and any node
answers. It is bounded: 256 KiB per unit, machine or node, 16 MiB in all, the
oldest lines dropped first. An agent that cannot ship as fast as a hook
prints drops lines and says so with a line "N lines dropped". Secret values
a unit sees are replaced by <redacted sha256:…> before a line is kept.`,
		Example: `  fixpoint debug-log --include web/0 --replay
  fixpoint debug-log --include web --exclude web/2 --level warning --follow
  fixpoint debug-log --include m1 --tail 20 -o json | jq -r .message`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkStreamFormat(format); err != nil {
				return err
			}
			if f.Level == "warn" {
				f.Level = "warning"
			}
			if err := f.Check(); err != nil {
				return exitf(exitFailed, "debug-log: %v", err)
			}
			if replay && cmd.Flags().Changed("tail") {
				return exitf(exitFailed, "debug-log: --replay shows every line kept and --tail the last N: pass one")
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			out := cmd.OutOrStdout()
			print := func(lines []model.LogLine) {
				for i := range lines {
					printLogLine(out, &lines[i], format)
				}
			}
			q := api.DebugLogQuery{Filter: f}
			last, err := readDebugLog(ctx, c, q, replay, tail, print)
			if err != nil {
				return exitf(exitFailed, "debug-log: %v", err)
			}
			if !follow {
				return nil
			}
			return followDebugLog(ctx, c, q, last, print, cmd.ErrOrStderr())
		},
	}
	r.flags(cmd)
	r.envFlag(cmd)
	cmd.Flags().StringSliceVar(&f.Include, "include", nil, "show only lines of these units, services, machines or nodes")
	cmd.Flags().StringSliceVar(&f.Exclude, "exclude", nil, "leave out lines of these units, services, machines or nodes")
	cmd.Flags().StringVar(&f.Level, "level", "", "show only this level and above: debug, info, warning, error")
	cmd.Flags().BoolVar(&replay, "replay", false, "show every line kept, from the oldest")
	cmd.Flags().IntVarP(&tail, "tail", "n", 100, "show the last N lines (0: none, with --follow only new ones)")
	cmd.Flags().BoolVar(&follow, "follow", false, "keep printing new lines as they come")
	cmd.Flags().StringVarP(&format, "format", "o", "text", "output format: text, or json (one line per line)")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("level", cobra.FixedCompletions(model.LogLevels, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("include", completeUnitsAndServices)
	_ = cmd.RegisterFlagCompletionFunc("exclude", completeUnitsAndServices)
	return cmd
}

// readDebugLog prints the lines of q's filter already kept: every one
// with replay, else the last tail (none when tail <= 0). It returns the
// number of the last line it read, where a follow resumes.
func readDebugLog(ctx context.Context, c *api.Client, q api.DebugLogQuery, replay bool, tail int, print func([]model.LogLine)) (uint64, error) {
	q.Tail = tail
	switch {
	case replay:
		q.Tail = 0
	case tail <= 0:
		// No past lines: one read learns where the log is.
		q.Tail = 1
	}
	for {
		page, err := c.DebugLog(ctx, q)
		if err != nil {
			return 0, err
		}
		if replay || tail > 0 {
			print(page.Lines)
		}
		// A replay pages on until it has read the whole log.
		if !replay || len(page.Lines) == 0 || page.Last >= page.Kept.Last {
			return page.Last, nil
		}
		q.After = page.Last
	}
}

// followDebugLog long-polls for lines after last until ctx ends. Line
// numbers are the same on every node, so a follow rides out a leader
// change or a node going away and resumes exactly where it was.
func followDebugLog(ctx context.Context, c *api.Client, q api.DebugLogQuery, last uint64, print func([]model.LogLine), errw io.Writer) error {
	return pollFollow(ctx, "debug-log", errw, func() error {
		q.After, q.Wait = last, 30*time.Second
		page, err := c.DebugLog(ctx, q)
		if err == nil {
			print(page.Lines)
			last = page.Last
		}
		return err
	})
}

// pollFollow calls poll until ctx ends, backing off while it fails with
// errors that retrying may cure (a node down, no leader).
func pollFollow(ctx context.Context, what string, errw io.Writer, poll func() error) error {
	failures := 0
	for ctx.Err() == nil {
		err := poll()
		switch {
		case err == nil:
			failures = 0
			continue
		case ctx.Err() != nil:
			return nil
		}
		if ae := (*api.Error)(nil); errors.As(err, &ae) && !ae.Kind.Retryable() {
			return exitf(exitFailed, "%s: %v", what, err)
		}
		failures++
		d := time.Duration(min(failures, 5)) * time.Second
		fmt.Fprintf(errw, "fixpoint: %s: %v; retrying in %s\n", what, err, d)
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
	}
	return nil
}

// printLogLine prints one line: time, source, level, origin, message; or
// the line as JSON.
func printLogLine(w io.Writer, l *model.LogLine, format string) {
	if format == "json" {
		_ = writeJSONStatus(w, l, true)
		return
	}
	// Everything but the time comes from hooks and agents: escape it.
	fmt.Fprintf(w, "%s  %-12s  %-7s  %-8s  %s\n", time.Unix(0, l.Time).Local().Format(isoTime),
		escapeControl(l.Source(), false), strings.ToUpper(l.Level), l.Origin, escapeControl(l.Message, false))
}
