package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
)

// phases, in the order operators care about them.
var phases = []string{engine.Error, engine.Pending, engine.Reconciling, engine.Settled}

func newStatusCmd() *cobra.Command {
	var r remote
	var f statusFilter
	var format string
	var watch, stale bool
	cmd := &cobra.Command{
		Use:   "status [SERVICE|UNIT...]",
		Short: "Show every unit's phase, workload status and leader",
		Long: `status shows the environment grouped by service: each unit's machine, phase
(pending, reconciling, settled, error), workload status and message, and how
many times its hook ran; the leader of each service is marked with *. The
first line sums it up: "converged at index N" or "K of U units pending, 1 error".

Name services or units to show only those, and --phase to show only units in
some phases. --format json and yaml print the same data for scripts (fields:
index, converged, summary, services, and per unit phase, status {state,
message}, leader, machine, reconciles, error). --watch follows changes: on a
terminal it redraws in place, otherwise it prints the table once and then one
line per change (with --format json, one JSON document per line).`,
		Example: `  fixpoint status
  fixpoint status web --phase error,pending
  fixpoint status --format json | jq -r '.units | to_entries[] | select(.value.phase=="error") | .key'
  fixpoint status --format yaml db/0
  fixpoint status --watch --controller 10.0.0.1:7070`,
		ValidArgsFunction: completeUnitsAndServices,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "table" && format != "json" && format != "yaml" {
				return exitf(exitFailed, "--format %q: use table, json or yaml", format)
			}
			f.names = args
			for _, p := range f.phases {
				if !isPhase(p) {
					return exitf(exitFailed, "--phase %q: phases are %s", p, strings.Join(phases, ", "))
				}
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			tty := isTerminal(out)
			p := &progress{w: out}
			var index uint64
			for n := 0; ; n++ {
				st, err := c.Status(ctx, stale, index, 30*time.Second)
				if err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return exitf(exitFailed, "status: %v", err)
				}
				if n == 0 {
					if err := f.check(st); err != nil {
						return err
					}
				}
				shown := f.apply(st)
				switch {
				case format == "json":
					if err := writeJSONStatus(out, shown, watch); err != nil {
						return err
					}
				case format == "yaml":
					if watch && n > 0 {
						fmt.Fprintln(out, "---")
					}
					if err := writeYAML(out, shown); err != nil {
						return err
					}
				case watch && tty:
					var b bytes.Buffer
					fmt.Fprintf(&b, "fixpoint status --watch · %s · Ctrl-C to quit\n\n", time.Now().Format("15:04:05"))
					printStatusTo(&b, shown, st, true)
					// Home, draw, clear what is left of the previous frame.
					fmt.Fprint(out, "\x1b[H"+strings.ReplaceAll(b.String(), "\n", "\x1b[K\n")+"\x1b[J")
				case watch && n > 0:
					p.update(shown)
				default:
					printStatusTo(out, shown, st, tty)
					p.seed(shown)
				}
				if !watch {
					return nil
				}
				index = st.Index
			}
		},
	}
	r.flags(cmd)
	cmd.Flags().StringVar(&format, "format", "table", "output format: table, json or yaml")
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "follow changes: redraw on a terminal, one line per change otherwise")
	cmd.Flags().BoolVar(&stale, "stale", false, "read the contacted node's copy instead of a linearizable read")
	cmd.Flags().StringSliceVar(&f.phases, "phase", nil, "show only units in these phases (pending, reconciling, settled, error; comma-separated)")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"table", "json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("phase", cobra.FixedCompletions(phases, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func isPhase(p string) bool {
	for _, q := range phases {
		if p == q {
			return true
		}
	}
	return false
}

// statusFilter selects services, units and phases.
type statusFilter struct {
	names  []string
	phases []string
}

// check says which names are neither services nor units.
func (f *statusFilter) check(st *engine.Status) error {
	for _, n := range f.names {
		if _, ok := st.Services[n]; ok {
			continue
		}
		if _, ok := st.Units[n]; ok {
			continue
		}
		return exitf(exitFailed, "%s is neither a service nor a unit of the environment (services: %s)", n, strings.Join(sortedKeys(st.Services), ", "))
	}
	return nil
}

func (f *statusFilter) empty() bool { return len(f.names) == 0 && len(f.phases) == 0 }

// apply returns st restricted to the selected units and their services;
// index, converged and summary stay those of the whole environment.
func (f *statusFilter) apply(st *engine.Status) *engine.Status {
	if f.empty() {
		return st
	}
	out := *st
	out.Units = map[string]*engine.UnitStatus{}
	out.Services = map[string]*engine.ServiceStatus{}
	for name, u := range st.Units {
		if f.wantUnit(name, u) {
			out.Units[name] = u
			if s := st.Services[u.Service]; s != nil {
				out.Services[u.Service] = s
			}
		}
	}
	if len(f.phases) == 0 {
		// A named service with no units yet is still shown.
		for _, n := range f.names {
			if s, ok := st.Services[n]; ok {
				out.Services[n] = s
			}
		}
	}
	return &out
}

func (f *statusFilter) wantUnit(name string, u *engine.UnitStatus) bool {
	if len(f.names) > 0 {
		ok := false
		for _, n := range f.names {
			if n == name || n == u.Service {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	if len(f.phases) > 0 {
		for _, p := range f.phases {
			if u.Phase == p {
				return true
			}
		}
		return false
	}
	return true
}

func writeJSONStatus(w io.Writer, st *engine.Status, compact bool) error {
	enc := json.NewEncoder(w)
	if !compact {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(st)
}

// writeYAML prints v as YAML with the field names of its JSON encoding.
func writeYAML(w io.Writer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return err
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(numbers(tree)); err != nil {
		return err
	}
	return enc.Close()
}

// numbers turns JSON numbers into integers where they are, so YAML prints
// indexes as 1234567 rather than 1.234567e+06.
func numbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = numbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = numbers(e)
		}
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n
		}
		f, _ := v.Float64()
		return f
	}
	return v
}

// printStatus prints the status table, grouped by service.
func printStatus(w io.Writer, st *engine.Status) {
	printStatusTo(w, st, st, isTerminal(w))
}

// printStatusTo prints the table of shown, with the summary line of the
// whole environment all; color marks phases on a terminal.
func printStatusTo(w io.Writer, shown, all *engine.Status, color bool) {
	name := all.Environment
	if name == "" {
		name = "(unnamed)"
	}
	summary := all.Summary
	if summary == "" && len(all.Units) == 0 {
		summary = fmt.Sprintf("no units at index %d", all.Index)
	}
	fmt.Fprintf(w, "Environment %s: %s\n", name, summary)
	if len(shown.Units) != len(all.Units) {
		fmt.Fprintf(w, "(showing %d of %d units)\n", len(shown.Units), len(all.Units))
	}
	fmt.Fprintln(w)
	if len(shown.Services) == 0 {
		fmt.Fprintln(w, "no services match")
		return
	}
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "UNIT\tMACHINE\tPHASE\tWORKLOAD\tMESSAGE\tRECONCILES")
	for _, svc := range sortedServices(shown) {
		ss := shown.Services[svc]
		units := unitsOf(shown, svc)
		fmt.Fprintf(tw, "%s\t\t%s\t\t(charm %s, %s)\t\n", svc, serviceSummary(shown, units, ss), short(ss.Charm), ss.Life)
		for _, name := range units {
			u := shown.Units[name]
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
			machine := orDash(u.Machine)
			if u.Agent != "" {
				machine += " (" + u.Agent + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", label, machine, u.Phase, orDash(u.Status.State), oneLine(msg), u.Reconciles)
		}
	}
	tw.Flush()
	printReplacedCredentials(&buf, shown)
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	// Colour after aligning: tabwriter would count the escape codes.
	col := strings.Index(lines[0], "PHASE")
	for _, l := range lines {
		l = strings.TrimRight(l, " ")
		if color && strings.HasPrefix(l, "  ") && len(l) > col {
			phase, rest, _ := strings.Cut(l[col:], " ")
			l = l[:col] + colorPhase(phase) + " " + rest
		}
		fmt.Fprintln(w, strings.TrimRight(l, " "))
	}
}

// serviceSummary is a service's row in the PHASE column: how many of its
// units are settled, "1/2 settled" (the unit rows say what the others do).
func serviceSummary(st *engine.Status, units []string, ss *engine.ServiceStatus) string {
	if len(units) == 0 {
		return fmt.Sprintf("0/%d units", ss.Units)
	}
	settled := 0
	for _, n := range units {
		if st.Units[n].Phase == engine.Settled {
			settled++
		}
	}
	return fmt.Sprintf("%d/%d settled", settled, len(units))
}

// colorPhase paints a (padded) phase for a terminal, unless NO_COLOR is set.
// Every escape sequence has the same length.
func colorPhase(s string) string {
	if os.Getenv("NO_COLOR") != "" {
		return s
	}
	code := ""
	switch strings.TrimSpace(s) {
	case engine.Settled:
		code = "0;32"
	case engine.Pending:
		code = "0;33"
	case engine.Reconciling:
		code = "0;36"
	case engine.Error:
		code = "1;31"
	default:
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
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
	s = escapeControl(strings.Join(strings.Fields(s), " "), false)
	if r := []rune(s); len(r) > 100 {
		s = string(r[:97]) + "..."
	}
	return s
}

// progress shows convergence as it happens, the same way for up, apply
// --wait, wait and status --watch off a terminal: a line for every unit
// whose phase or workload status changed, and a line whenever the
// environment's summary changes. On a terminal the summary line at the
// bottom is rewritten in place until it settles.
type progress struct {
	w       io.Writer
	prev    map[string]string
	summary string
	// live is set while an in-place summary line is on screen.
	live   bool
	tty    bool
	probed bool
}

// seed records st as already shown, so that only later changes print.
func (p *progress) seed(st *engine.Status) {
	p.prev = map[string]string{}
	for n, u := range st.Units {
		p.prev[n] = unitLine(u)
	}
	p.summary = st.Summary
}

func unitLine(u *engine.UnitStatus) string {
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
	return line
}

func (p *progress) update(st *engine.Status) {
	if !p.probed {
		p.tty, p.probed = isTerminal(p.w), true
	}
	if p.prev == nil {
		p.prev = map[string]string{}
	}
	var names []string
	for n := range st.Units {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return model.UnitLess(names[i], names[j]) })
	now := time.Now().Format("15:04:05")
	var lines []string
	seen := map[string]bool{}
	for _, n := range names {
		u := st.Units[n]
		seen[n] = true
		line := unitLine(u)
		if p.prev[n] != line {
			if p.tty {
				phase, rest, _ := strings.Cut(line, "  ")
				line = strings.TrimRight(colorPhase(fmt.Sprintf("%-11s", phase))+"  "+rest, " ")
			}
			lines = append(lines, fmt.Sprintf("%s  %-12s %s", now, n, line))
			p.prev[n] = unitLine(u)
		}
	}
	for _, n := range sortedKeys(p.prev) {
		if !seen[n] {
			lines = append(lines, fmt.Sprintf("%s  %-12s removed", now, n))
			delete(p.prev, n)
		}
	}
	changed := st.Summary != p.summary
	p.summary = st.Summary
	if p.tty {
		if p.live {
			fmt.Fprint(p.w, "\r\x1b[K")
			p.live = false
		}
		for _, l := range lines {
			fmt.Fprintln(p.w, l)
		}
		if st.Converged || st.Summary == "" {
			if changed {
				fmt.Fprintf(p.w, "%s  %s\n", now, st.Summary)
			}
			return
		}
		fmt.Fprintf(p.w, "%s  … %s", now, st.Summary)
		p.live = true
		return
	}
	for _, l := range lines {
		fmt.Fprintln(p.w, l)
	}
	if changed && st.Summary != "" {
		fmt.Fprintf(p.w, "%s  == %s\n", now, st.Summary)
	}
}

// done ends an in-place summary line, so that what follows starts clean.
func (p *progress) done() {
	if p.live {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.live = false
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
	if p != nil {
		defer p.done()
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

// follow shows progress until ctx ends, at every change of the state.
func follow(ctx context.Context, c statusSource, p *progress) {
	defer p.done()
	var index uint64
	for ctx.Err() == nil {
		st, err := c.Status(ctx, false, index, 30*time.Second)
		if err != nil {
			if ctx.Err() == nil {
				time.Sleep(time.Second) // the node is going away; try again
			}
			continue
		}
		p.update(st)
		index = st.Index
	}
}

// printReplacedCredentials names every machine whose agent credential was
// replaced after an operator reset: a takeover must never be silent.
func printReplacedCredentials(w io.Writer, st *engine.Status) {
	for _, name := range slices.Sorted(maps.Keys(st.Machines)) {
		if m := st.Machines[name]; m.CredentialReplaced != 0 {
			fmt.Fprintf(w, "\nmachine %s: its agent credential was reset at index %d (`fixpoint machine reset`); the agent registered since then holds a new one; address %s\n", name, m.CredentialReplaced, oneLine(m.Address))
		}
	}
}
