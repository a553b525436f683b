package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
)

func newStatusCmd() *cobra.Command {
	var r remote
	var format string
	var watch, stale bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show every unit's phase, workload status and leader",
		Example: `  fixpoint status
  fixpoint status --format json | jq .converged
  fixpoint status --watch --controller 10.0.0.1:7070`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "table" && format != "json" {
				return exitf(exitFailed, "--format %q: use table or json", format)
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			var index uint64
			for {
				st, err := c.Status(ctx, stale, index, 30*time.Second)
				if err != nil {
					return exitf(exitFailed, "status: %v", err)
				}
				if format == "json" {
					enc := json.NewEncoder(os.Stdout)
					enc.SetIndent("", "  ")
					_ = enc.Encode(st)
				} else {
					printStatus(os.Stdout, st)
				}
				if !watch {
					return nil
				}
				index = st.Index
			}
		},
	}
	r.flags(cmd)
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	cmd.Flags().BoolVar(&watch, "watch", false, "print again whenever the state changes")
	cmd.Flags().BoolVar(&stale, "stale", false, "read the contacted node's copy instead of a linearizable read")
	return cmd
}

// printStatus prints the status table, grouped by service.
func printStatus(w io.Writer, st *engine.Status) {
	name := st.Environment
	if name == "" {
		name = "(unnamed)"
	}
	fmt.Fprintf(w, "Environment %s: %s\n\n", name, st.Summary)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "UNIT\tMACHINE\tPHASE\tWORKLOAD\tMESSAGE\tRECONCILES")
	for _, svc := range sortedServices(st) {
		ss := st.Services[svc]
		fmt.Fprintf(tw, "%s\t\t\t\t(charm %s, %s)\t\n", svc, short(ss.Charm), ss.Life)
		for _, name := range unitsOf(st, svc) {
			u := st.Units[name]
			label := "  " + name
			if u.Leader {
				label += "*"
			}
			msg := u.Status.Message
			switch {
			case u.Phase == engine.Error:
				msg = u.Error
			case u.Reason != "":
				msg = strings.TrimSpace(msg + " (" + u.Reason + ")")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", label, orDash(u.Machine), u.Phase, orDash(u.Status.State), oneLine(msg), u.Reconciles)
		}
	}
	tw.Flush()
}

func sortedServices(st *engine.Status) []string {
	var out []string
	for s := range st.Services {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func unitsOf(st *engine.Status, svc string) []string {
	var out []string
	for n, u := range st.Units {
		if u.Service == svc {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return model.UnitLess(out[i], out[j]) })
	return out
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 100 {
		s = s[:97] + "..."
	}
	return s
}

// progress prints a line for every unit whose phase or workload status
// changed since the previous status.
type progress struct {
	w    io.Writer
	prev map[string]string
}

func (p *progress) update(st *engine.Status) {
	if p.prev == nil {
		p.prev = map[string]string{}
	}
	var names []string
	for n := range st.Units {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return model.UnitLess(names[i], names[j]) })
	now := time.Now().Format("15:04:05")
	seen := map[string]bool{}
	for _, n := range names {
		u := st.Units[n]
		seen[n] = true
		line := u.Phase
		detail := ""
		switch {
		case u.Phase == engine.Error:
			detail = u.Error
		case u.Phase == engine.Pending && u.Reason != "":
			detail = u.Reason
		case u.Status.State != "":
			detail = u.Status.State
			if u.Status.Message != "" {
				detail += ": " + u.Status.Message
			}
		}
		if detail != "" {
			line += "  " + oneLine(detail)
		}
		if p.prev[n] != line {
			fmt.Fprintf(p.w, "%s  %-12s %s\n", now, n, line)
			p.prev[n] = line
		}
	}
	for n := range p.prev {
		if !seen[n] {
			fmt.Fprintf(p.w, "%s  %-12s removed\n", now, n)
			delete(p.prev, n)
		}
	}
}

// statusSource is what waitConverged polls.
type statusSource interface {
	Status(ctx context.Context, stale bool, index uint64, wait time.Duration) (*engine.Status, error)
}

// waitConverged follows status until the fixed point, a unit error or
// the timeout, showing progress; it returns the exit code and last status.
func waitConverged(ctx context.Context, c statusSource, p *progress, timeout time.Duration, stopOnError bool) (int, *engine.Status, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var index uint64
	var last *engine.Status
	for {
		st, err := c.Status(ctx, false, index, 10*time.Second)
		if err != nil {
			if ctx.Err() != nil {
				return exitTimeout, last, nil
			}
			return exitFailed, last, err
		}
		last = st
		if p != nil {
			p.update(st)
		}
		if st.Converged {
			return exitOK, st, nil
		}
		if unit, _ := st.FirstError(); unit != "" && stopOnError {
			return exitUnitErr, st, nil
		}
		index = st.Index
	}
}
