package main

import (
	"bytes"
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

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
)

// phases, in the order operators care about them.
var phases = []string{engine.Error, engine.Pending, engine.Reconciling, engine.Settled}

// blocked is what --phase takes besides the phases: the units whose
// workload says blocked (the workload's word, not a phase; most are
// settled).
const blocked = "blocked"

// phaseFilters are what --phase takes.
var phaseFilters = append(slices.Clone(phases), blocked)

func newStatusCmd() *cobra.Command {
	var r remote
	var f statusFilter
	var format string
	var watch, stale, relations bool
	cmd := &cobra.Command{
		Use:   "status [SERVICE|UNIT...]",
		Short: "Show every unit's phase, workload status and leader",
		Long: `status shows the environment grouped by service: each unit's machine, phase
(pending, reconciling, settled, error), workload status and message, and how
many times its hook ran; the leader of each service is marked with *. The
first line sums it up: "converged at index N" or "K of U units pending, 1 error";
a converged environment with blocked units or units on a lost machine says
so ("converged at index N; 3 blocked", "converged over 5 of 7 units at index
N; machine m1 lost"), and one whose starting environment is still being
applied says "applying environment". Under it, a line names each lost
machine and the units waiting on it, and each control-plane node that
stopped answering, with its last contact, and (with more than one server)
a line naming each control-plane server's build and feature level, with a
warning while they differ (a rolling upgrade) or one stopped applying the log. SINCE is how long each unit has been in
its phase. --relations adds a table of the relations (as juju status
--relations does): id, endpoints, interface, scope and member units.

Name services or units to show only those, and --phase to show only units in
some phases (--phase blocked: the units whose workload is blocked). --format json and yaml print the same data for scripts (fields:
index, applying, converged, summary, services, relations {id, endpoints,
interface, scope, life, members}, machines {id (Juju's machine id, shown
as #N beside the machine's name), address, state, labels}, lost_machines
{machine, units} (lost
machines and the units waiting on them), unreachable_nodes {id, last_seen}
(control-plane nodes that stopped answering the leader), cluster {level,
nodes {id, version, level, halted}, mixed, warnings}, and per unit
phase, since, status {state, message}, leader, machine, reconciles,
error). --watch follows changes: on a
terminal it redraws in place, otherwise it prints the table once and then one
line per change: the summary line, units going into error, and the table
again at each fixed point of up to 1,000 units (with service, unit or phase
filters, a line per unit that changed; with --format json, one JSON
document per line).`,
		Example: `  fixpoint status
  fixpoint status web --phase error,pending
  fixpoint status --format json | jq -r '.units | to_entries[] | select(.value.phase=="error") | .key'
  fixpoint status --format yaml db/0
  fixpoint status --watch --controller 10.0.0.1:7070`,
		ValidArgsFunction: completeUnitsAndServices,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			f.names = args
			for _, p := range f.phases {
				if !isPhase(p) {
					return exitf(exitFailed, "--phase %q: phases are %s, and blocked selects the units whose workload is blocked", p, strings.Join(phases, ", "))
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
			// The last status shown: the next poll waits for a change
			// past it, a phase change without a new entry included.
			var last *engine.Status
			for n := 0; ; n++ {
				st, err := c.WaitStatus(ctx, stale, last, 30*time.Second)
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
					if relations {
						printRelations(&b, shown)
					}
					// Home, draw, clear what is left of the previous frame.
					fmt.Fprint(out, "\x1b[H"+strings.ReplaceAll(b.String(), "\n", "\x1b[K\n")+"\x1b[J")
				case watch && n > 0:
					p.update(shown)
				default:
					printStatusTo(out, shown, st, tty)
					if relations {
						printRelations(out, shown)
					}
					p.seed(shown)
				}
				if !watch {
					return nil
				}
				if format == "table" && !tty && f.empty() {
					// One line per change of the whole environment: the
					// summary says it, without the full status per poll
					// (tens of megabytes at 100,000 units).
					follow(ctx, c, p, stale, &engine.Summary{Index: st.Index, Generation: st.Generation, Converged: st.Converged,
						Phases: engine.PhaseCounts{Units: len(st.Units)}})
					return nil
				}
				last = st
			}
		},
	}
	r.flags(cmd)
	r.envFlag(cmd)
	formatFlag(cmd, &format)
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "follow changes: redraw on a terminal, one line per change otherwise")
	cmd.Flags().BoolVar(&stale, "stale", false, "read the contacted node's copy instead of a linearizable read")
	cmd.Flags().StringSliceVar(&f.phases, "phase", nil, "show only units in these phases (pending, reconciling, settled, error; blocked for units whose workload is blocked; comma-separated)")
	cmd.Flags().BoolVar(&relations, "relations", false, "also list the relations: endpoints, interface, scope, members")
	_ = cmd.RegisterFlagCompletionFunc("phase", cobra.FixedCompletions(phaseFilters, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// statusNow is the clock SINCE is measured against; tests fix it.
var statusNow = time.Now

// isPhase says whether --phase takes p.
func isPhase(p string) bool {
	for _, q := range phaseFilters {
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
		return exitf(exitFailed, "%s is neither a service nor a unit of the environment (services: %s)", n, strings.Join(slices.Sorted(maps.Keys(st.Services)), ", "))
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
			if u.Phase == p || (p == blocked && u.Status.State == blocked) {
				return true
			}
		}
		return false
	}
	return true
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
	for _, l := range lostMachineLines(all.LostMachines) {
		fmt.Fprintln(w, l)
	}
	for _, l := range unreachableLines(all.UnreachableNodes, statusNow()) {
		fmt.Fprintln(w, l)
	}
	for _, l := range clusterLevelLines(all.Cluster) {
		fmt.Fprintln(w, l)
	}
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
	now := statusNow()
	fmt.Fprintln(tw, "UNIT\tMACHINE\tPHASE\tSINCE\tWORKLOAD\tMESSAGE\tRECONCILES")
	for _, svc := range sortedServices(shown) {
		ss := shown.Services[svc]
		units := unitsOf(shown, svc)
		// The application status its leader set goes where juju status
		// puts it: on the service's line.
		about := fmt.Sprintf("(charm %s, %s", model.ShortHash(ss.Charm), ss.Life)
		if ss.Version != "" {
			about += ", version " + ss.Version
		}
		for _, n := range slices.Sorted(maps.Keys(ss.Resources)) {
			about += ", resource " + n + " " + model.ShortHash(ss.Resources[n])
		}
		about += ")"
		workload := ""
		if ss.Status != nil {
			workload = ss.Status.State
			about = strings.TrimSpace(oneLine(ss.Status.Message) + " " + about)
		}
		fmt.Fprintf(tw, "%s\t\t%s\t\t%s\t%s\t\n", svc, serviceSummary(shown, units, ss), workload, about)
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
			if m := shown.Machines[u.Machine]; m != nil && m.ID != "" {
				// Juju's id, which charms read as JUJU_MACHINE_ID.
				machine += " #" + m.ID
			}
			if u.Agent != "" {
				machine += " (" + u.Agent + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\n", label, machine, u.Phase, phaseAge(u, now), orDash(u.Status.State), oneLine(msg), u.Reconciles)
		}
	}
	tw.Flush()
	printReplacedCredentials(&buf, shown)
	printMachineLabels(&buf, shown)
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

// lostMachineLines is a line per lost machine that holds units, naming
// them (the first engine.SummaryLimit): "machine m1 lost; waiting on it:
// web/0, db/1".
func lostMachineLines(lost []engine.LostMachine) []string {
	var out []string
	for _, m := range lost {
		units, more := m.Units, m.MoreUnits
		if len(units) > engine.SummaryLimit {
			units, more = units[:engine.SummaryLimit], more+len(units)-engine.SummaryLimit
		}
		l := fmt.Sprintf("machine %s lost; waiting on it: %s", m.Machine, strings.Join(units, ", "))
		if more > 0 {
			l += fmt.Sprintf(" and %d more", more)
		}
		out = append(out, l)
	}
	return out
}

// unreachableLines is a line per control-plane node that stopped
// answering the leader: "control-plane node n3 not answering; last
// contact 42s ago".
func unreachableLines(nodes []engine.UnreachableNode, now time.Time) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, fmt.Sprintf("control-plane node %s not answering; last contact %s ago (see fixpoint cluster members)", oneLine(n.ID), now.Sub(n.LastSeen).Round(time.Second)))
	}
	return out
}

// clusterLevelLines is the control plane's builds in one line, "control
// plane at feature level 2: n1 v0.4.0 (level 2), n2 ...", and a line per
// warning (a mixed cluster, a halted node, a level to raise); nothing for
// a control plane of one server with nothing to say (fixpoint up).
func clusterLevelLines(c *model.ClusterLevel) []string {
	if c == nil || len(c.Nodes) == 0 || (len(c.Nodes) == 1 && len(c.Warnings) == 0) {
		return nil
	}
	var nodes []string
	for _, n := range c.Nodes {
		nodes = append(nodes, nodeLevelWord(n))
	}
	out := []string{fmt.Sprintf("control plane at feature level %d: %s", c.Level, strings.Join(nodes, ", "))}
	for _, w := range c.Warnings {
		out = append(out, "warning: "+oneLine(w))
	}
	return out
}

// nodeLevelWord is one server's build: "n1 v0.4.0 (level 2)".
func nodeLevelWord(n model.NodeLevel) string {
	if n.Level == 0 {
		return oneLine(n.ID) + " (not answering)"
	}
	v := oneLine(n.Version)
	if v == "" {
		v = "v0.3.0 or older"
	}
	return fmt.Sprintf("%s %s (level %d)", oneLine(n.ID), v, n.Level)
}

// printRelations prints the relations among the shown services, as
// juju status --relations does.
func printRelations(w io.Writer, shown *engine.Status) {
	fmt.Fprintln(w)
	var rels []*engine.RelationStatus
	for _, r := range shown.Relations {
		for _, ep := range r.Endpoints {
			svc, _, _ := strings.Cut(ep, ":")
			if shown.Services[svc] != nil {
				rels = append(rels, r)
				break
			}
		}
	}
	if len(rels) == 0 {
		fmt.Fprintln(w, "no relations")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RELATION\tENDPOINTS\tINTERFACE\tSCOPE\tMEMBERS")
	for _, r := range rels {
		eps := strings.Join(r.Endpoints, " ")
		if len(r.Endpoints) == 1 {
			eps += " (peer)"
		}
		members := strings.Join(r.Members, ",")
		if len(r.Members) == 0 {
			members = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", r.ID, eps, r.Interface, r.Scope, members)
	}
	tw.Flush()
}

// printMachineLabels shows the labels of the machines that have some, in
// name order: what an environment's placement by labels selects.
func printMachineLabels(w io.Writer, st *engine.Status) {
	var lines []string
	for _, name := range slices.Sorted(maps.Keys(st.Machines)) {
		m := st.Machines[name]
		if len(m.Labels) == 0 {
			continue
		}
		kv := make([]string, 0, len(m.Labels))
		for _, k := range slices.Sorted(maps.Keys(m.Labels)) {
			kv = append(kv, k+"="+m.Labels[k])
		}
		lines = append(lines, fmt.Sprintf("machine %s: labels %s", name, strings.Join(kv, ",")))
	}
	if len(lines) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(lines, "\n"))
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
