package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

func newEventsCmd() *cobra.Command {
	var r remote
	var followFlag bool
	var tail int
	var format string
	cmd := &cobra.Command{
		Use:   "events [UNIT|SERVICE]",
		Short: "Show what happened to units: runs, failures, retries, resolves, leadership, machines",
		Long: `events lists what happened to a unit (or to every unit of a service, or to all
units), oldest first, as kubectl's events do: created, hook run started,
succeeded or failed (with the attempt), the retry and its delay, resolved, a
new workload status, elected leader or no longer leader, its machine lost or
back, dying and removed. Warnings (failures, a lost machine, a blocked status)
are marked.

Events are derived from the changes the control plane applies, replicated
and kept by every node (16 KiB per unit, 8 MiB in all, the oldest dropped
first): they survive a leader change and a restart. Times are when the
change was made, on the leader's clock. --follow keeps printing new events
until interrupted. Secret values are shown as <redacted sha256:…>; --reveal
shows them, to the operator credential only.`,
		Example: `  fixpoint events web/0
  fixpoint events web --follow
  fixpoint events -o json | jq -r 'select(.warning) | .message'`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeUnitsAndServices,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkStreamFormat(format); err != nil {
				return err
			}
			of := ""
			if len(args) == 1 {
				of = args[0]
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			out := cmd.OutOrStdout()
			print := func(evs []model.Event) {
				for i := range evs {
					printEvent(out, &evs[i], format)
				}
			}
			page, err := c.Events(ctx, of, 0, tail, 0)
			if err != nil {
				return exitf(exitFailed, "events: %v", err)
			}
			if len(page.Events) == 0 && !followFlag && format == "text" {
				fmt.Fprintf(out, "no events of %s\n", orWord(of, "any unit"))
			}
			print(page.Events)
			if !followFlag {
				return nil
			}
			last := page.Last
			return pollFollow(ctx, "events", cmd.ErrOrStderr(), func() error {
				page, err := c.Events(ctx, of, last, 0, 30*time.Second)
				if err == nil {
					print(page.Events)
					last = page.Last
				}
				return err
			})
		},
	}
	r.flags(cmd)
	r.envFlag(cmd)
	r.revealFlag(cmd)
	cmd.Flags().BoolVar(&followFlag, "follow", false, "keep printing new events as they happen")
	cmd.Flags().IntVarP(&tail, "tail", "n", 0, "show only the last N events (0: all kept)")
	cmd.Flags().StringVarP(&format, "format", "o", "text", "output format: text, or json (one event per line)")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// printEvent prints one event: time, unit, type, kind, message; or the
// event as JSON.
func printEvent(w io.Writer, e *model.Event, format string) {
	if format == "json" {
		_ = writeJSONStatus(w, e, true)
		return
	}
	typ := "Normal"
	if e.Warning {
		typ = "Warning"
	}
	fmt.Fprintf(w, "%s  %-12s  %-7s  %-12s  %s\n", time.Unix(0, e.Time).Local().Format(isoTime),
		escapeControl(e.Unit, false), typ, e.Kind, escapeControl(e.Message, false))
}

func orWord(s, word string) string {
	if s == "" {
		return word
	}
	return s
}

// unitEvent is an event as show-unit prints it.
type unitEvent struct {
	Time    string `json:"time"`
	Type    string `json:"type"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// recentEvents reads unit's last n events for show-unit; a control plane
// that keeps none, or cannot be read, leaves them out.
func recentEvents(ctx context.Context, c *api.Client, unit string, n int) []unitEvent {
	if n <= 0 {
		return nil
	}
	page, err := c.Events(ctx, unit, 0, n, 0)
	if err != nil {
		return nil
	}
	out := []unitEvent{}
	for _, e := range page.Events {
		typ := "Normal"
		if e.Warning {
			typ = "Warning"
		}
		out = append(out, unitEvent{Time: time.Unix(0, e.Time).Local().Format(isoTime), Type: typ, Kind: e.Kind, Message: e.Message})
	}
	return out
}

// writeUnitYAML writes show-unit's YAML with the events last, one line
// each, as kubectl describe ends with them: YAML sorts a mapping's keys,
// so they are written after the rest, as one more key.
func writeUnitYAML(w io.Writer, d *unitDetail) error {
	evs := d.Events
	d.Events = nil
	if err := writeYAML(w, d); err != nil {
		return err
	}
	if evs == nil {
		return nil
	}
	lines := []string{}
	for _, e := range evs {
		lines = append(lines, fmt.Sprintf("%s  %-7s  %-12s  %s", e.Time, e.Type, e.Kind, e.Message))
	}
	return writeYAML(w, map[string][]string{"events": lines})
}
