package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

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
	// every is how often a line is printed while nothing changes (10s
	// when zero), so that a wait on a stuck unit is never silent; clock
	// is time.Now unless a test sets it.
	every   time.Duration
	clock   func() time.Time
	printed time.Time
}

func (p *progress) now() time.Time {
	if p.clock != nil {
		return p.clock()
	}
	return time.Now()
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
	at := p.now()
	now := at.Format("15:04:05")
	if p.printed.IsZero() {
		p.printed = at
	}
	var lines []string
	seen := map[string]bool{}
	for _, n := range names {
		u := st.Units[n]
		seen[n] = true
		line := unitLine(u)
		if p.prev[n] != line {
			lines = append(lines, p.unitChange(now, n, line))
			p.prev[n] = line
		}
	}
	for _, n := range slices.Sorted(maps.Keys(p.prev)) {
		if !seen[n] {
			lines = append(lines, fmt.Sprintf("%s  %-12s removed", now, n))
			delete(p.prev, n)
		}
	}
	p.show(at, lines, st.Summary, st.Converged, func() string { return stuck(st, at) })
}

// updateSummary is update for a waiter that polls the status summary: a
// line for every unit that went into error (the first ones by name, as
// the summary names them), and the summary line as update prints it.
func (p *progress) updateSummary(sum *engine.Summary) {
	if !p.probed {
		p.tty, p.probed = isTerminal(p.w), true
	}
	if p.prev == nil {
		p.prev = map[string]string{}
	}
	at := p.now()
	now := at.Format("15:04:05")
	if p.printed.IsZero() {
		p.printed = at
	}
	var lines []string
	inError := map[string]bool{}
	for _, e := range sum.Errors {
		inError[e.Unit] = true
		line := engine.Error + "  " + oneLine(e.Message)
		if p.prev[e.Unit] != line {
			lines = append(lines, p.unitChange(now, e.Unit, line))
			p.prev[e.Unit] = line
		}
	}
	// A unit out of error is said again when it fails again.
	for n := range p.prev {
		if !inError[n] {
			delete(p.prev, n)
		}
	}
	p.show(at, lines, sum.Summary, sum.Converged, func() string { return stuckLine(sum.Stuck, sum.MoreStuck, at) })
}

// unitChange is the progress line of unit name's new line (unitLine),
// its phase coloured on a terminal.
func (p *progress) unitChange(now, name, line string) string {
	if p.tty {
		phase, rest, _ := strings.Cut(line, "  ")
		line = strings.TrimRight(colorPhase(fmt.Sprintf("%-11s", phase))+"  "+rest, " ")
	}
	return fmt.Sprintf("%s  %-12s %s", now, name, line)
}

// show prints the unit lines of one update and the summary line: when it
// changed, or every p.every while nothing does (naming the units stuck
// longest), rewritten in place on a terminal.
func (p *progress) show(at time.Time, lines []string, summary string, converged bool, stuck func() string) {
	now := at.Format("15:04:05")
	changed := summary != p.summary
	p.summary = summary
	every := p.every
	if every == 0 {
		every = 10 * time.Second
	}
	if len(lines) > 0 || changed {
		p.printed = at
	} else if !converged && summary != "" && at.Sub(p.printed) >= every {
		lines = append(lines, fmt.Sprintf("%s  .. still %s%s", now, summary, stuck()))
		p.printed = at
	}
	if p.tty {
		if p.live {
			fmt.Fprint(p.w, "\r\x1b[K")
			p.live = false
		}
		for _, l := range lines {
			fmt.Fprintln(p.w, l)
		}
		if converged || summary == "" {
			if changed {
				fmt.Fprintf(p.w, "%s  %s\n", now, summary)
			}
			return
		}
		fmt.Fprintf(p.w, "%s  … %s", now, summary)
		p.live = true
		return
	}
	for _, l := range lines {
		fmt.Fprintln(p.w, l)
	}
	if changed && summary != "" {
		fmt.Fprintf(p.w, "%s  == %s\n", now, summary)
	}
}

// stuck names the units longest out of settled, with how long, for the
// lines printed while nothing changes: "; web/0 reconciling for 2m10s".
func stuck(st *engine.Status, now time.Time) string {
	var out []engine.UnitBrief
	for n, u := range st.Units {
		if u.Phase != engine.Settled && !u.Since.IsZero() {
			out = append(out, engine.UnitBrief{Unit: n, Phase: u.Phase, Since: u.Since})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Since, out[j].Since
		if !a.Equal(b) {
			return a.Before(b)
		}
		return model.UnitLess(out[i].Unit, out[j].Unit)
	})
	more := 0
	if len(out) > 3 {
		out, more = out[:3], len(out)-3
	}
	return stuckLine(out, more, now)
}

// stuckLine is stuck's words for units already picked (longest out of
// settled first) and how many more there are.
func stuckLine(units []engine.UnitBrief, more int, now time.Time) string {
	var parts []string
	for _, u := range units {
		parts = append(parts, fmt.Sprintf("%s %s for %s", u.Unit, u.Phase, phaseAge(&engine.UnitStatus{Since: u.Since}, now)))
	}
	if more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, ", ")
}

// done ends an in-place summary line, so that what follows starts clean.
func (p *progress) done() {
	if p.live {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.live = false
	}
}

// waitConverged follows the status summary until the fixed point (exit
// 0), the fixed point except units on lost machines (5), a unit error (3;
// with keepGoing, once every unit not in error settled) or the timeout
// (4), showing progress (api.Client.WaitConverged; engine.Summary.Outcome
// is the rule); it returns the exit code and the last summary.
func waitConverged(ctx context.Context, c *api.Client, p *progress, timeout time.Duration, keepGoing bool) (int, *engine.Summary, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	opts := api.WaitOptions{KeepGoing: keepGoing}
	if p != nil {
		defer p.done()
		opts.Progress = p.updateSummary
		opts.Outage = func(err error) {
			p.done()
			fmt.Fprintf(p.w, "%s  control plane cannot answer now, waiting on: %v\n", p.now().Format(time.TimeOnly), err)
		}
	}
	outcome, sum, err := c.WaitConverged(ctx, opts)
	switch {
	case err != nil && ctx.Err() != nil:
		return exitTimeout, sum, nil
	case err != nil:
		return exitFailed, sum, err
	}
	return exitOf(outcome), sum, nil
}

// exitOf is the exit code of a wait's outcome.
func exitOf(o engine.Outcome) int {
	switch o {
	case engine.FixedPoint:
		return exitOK
	case engine.FixedPointExceptLost:
		return exitLost
	case engine.UnitsInError:
		return exitUnitErr
	}
	return exitTimeout
}

// tableMax is the most units whose status table a waiter prints when it
// ends; a larger environment gets its summary by service instead (the
// table is a line per unit, and its status tens of megabytes).
const tableMax = 1000

// finalTable reads the full status for the table a waiter prints when it
// ends, if the environment is small enough (tableMax) and the status can
// be read within a few seconds; nil otherwise.
func finalTable(ctx context.Context, c *api.Client, sum *engine.Summary) *engine.Status {
	if sum == nil || sum.Phases.Units > tableMax {
		return nil
	}
	// The wait may have ended with its context (a timeout): the table
	// is still worth a short read.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	st, err := c.Status(ctx, false, 0, 0)
	if err != nil {
		return nil
	}
	return st
}

// follow shows progress until ctx ends, at every change of the state
// after last (nil: from now), from the status summary
// (api.Client.Follow); at every fixed point of a small environment it
// prints the status table too. stale reads the contacted node's copy.
func follow(ctx context.Context, c *api.Client, p *progress, stale bool, last *engine.Summary) {
	defer p.done()
	c.Follow(ctx, stale, last, func(prev, sum *engine.Summary) {
		p.updateSummary(sum)
		if sum.Converged && (prev == nil || !prev.Converged) {
			if st := finalTable(ctx, c, sum); st != nil {
				p.done()
				fmt.Fprintln(p.w)
				printStatusTo(p.w, st, st, p.tty)
			}
		}
	})
}

// printSummary prints, for an environment too large for the status table,
// its first line and a line per service with its units by phase, then the
// first units in error.
func printSummary(w io.Writer, sum *engine.Summary) {
	name := sum.Environment
	if name == "" {
		name = "(unnamed)"
	}
	fmt.Fprintf(w, "Environment %s: %s\n", name, sum.Summary)
	for _, l := range lostMachineLines(sum.LostMachines) {
		fmt.Fprintln(w, l)
	}
	for _, l := range unreachableLines(sum.UnreachableNodes, statusNow()) {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintf(w, "(%d units: by service; `fixpoint status SERVICE` lists a service's units)\n\n", sum.Phases.Units)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVICE\tUNITS\tSETTLED\tPENDING\tRECONCILING\tERROR\tLOST\tBLOCKED\tLEADER")
	for _, svc := range slices.Sorted(maps.Keys(sum.Services)) {
		c := sum.Services[svc]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", svc, c.Units, c.Settled, c.Pending, c.Reconciling, c.Error, c.Lost, c.Blocked, orDash(c.Leader))
	}
	tw.Flush()
	for _, e := range sum.Errors {
		fmt.Fprintf(w, "\n%s in error: %s", e.Unit, oneLine(e.Message))
	}
	if sum.MoreErrors > 0 {
		fmt.Fprintf(w, "\nand %d more in error", sum.MoreErrors)
	}
	if len(sum.Errors) > 0 {
		fmt.Fprintln(w)
	}
}
