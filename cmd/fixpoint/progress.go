package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fixpoint/fixpoint/engine"
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
			if p.tty {
				phase, rest, _ := strings.Cut(line, "  ")
				line = strings.TrimRight(colorPhase(fmt.Sprintf("%-11s", phase))+"  "+rest, " ")
			}
			lines = append(lines, fmt.Sprintf("%s  %-12s %s", now, n, line))
			p.prev[n] = unitLine(u)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(p.prev)) {
		if !seen[n] {
			lines = append(lines, fmt.Sprintf("%s  %-12s removed", now, n))
			delete(p.prev, n)
		}
	}
	changed := st.Summary != p.summary
	p.summary = st.Summary
	every := p.every
	if every == 0 {
		every = 10 * time.Second
	}
	if len(lines) > 0 || changed {
		p.printed = at
	} else if !st.Converged && st.Summary != "" && at.Sub(p.printed) >= every {
		lines = append(lines, fmt.Sprintf("%s  .. still %s%s", now, st.Summary, stuck(st, at)))
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

// stuck names the units longest out of settled, with how long, for the
// lines printed while nothing changes: "; web/0 reconciling for 2m10s".
func stuck(st *engine.Status, now time.Time) string {
	var names []string
	for n, u := range st.Units {
		if u.Phase != engine.Settled && !u.Since.IsZero() {
			names = append(names, n)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := st.Units[names[i]].Since, st.Units[names[j]].Since
		if !a.Equal(b) {
			return a.Before(b)
		}
		return model.UnitLess(names[i], names[j])
	})
	var parts []string
	for i, n := range names {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(names)-3))
			break
		}
		u := st.Units[n]
		parts = append(parts, fmt.Sprintf("%s %s for %s", n, u.Phase, phaseAge(u, now)))
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

// statusSource is what waitConverged polls: WaitStatus returns once the
// status moved past prev, a phase change without a new entry included.
type statusSource interface {
	WaitStatus(ctx context.Context, stale bool, prev *engine.Status, wait time.Duration) (*engine.Status, error)
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
	var last *engine.Status
	var asked time.Time
	for {
		if !pace(ctx, asked) {
			return exitTimeout, last, nil
		}
		asked = time.Now()
		st, err := c.WaitStatus(ctx, false, last, 10*time.Second)
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
	}
}

// statusPace spaces a follower's status polls. Every hand-out and every
// result moves the status generation, and at 1,000 units each answer is a
// full status computed under the controller's lock, which the hand-outs
// wait for; ten answers a second are plenty to watch, and nothing is
// missed in between: the next poll passes the generation it last saw.
const statusPace = 100 * time.Millisecond

// pace waits until statusPace after the last poll was sent (asked); false
// if ctx ended first.
func pace(ctx context.Context, asked time.Time) bool {
	d := time.Until(asked.Add(statusPace))
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// follow shows progress until ctx ends, at every change of the state.
func follow(ctx context.Context, c statusSource, p *progress) {
	defer p.done()
	var last *engine.Status
	var asked time.Time
	for pace(ctx, asked) {
		asked = time.Now()
		st, err := c.WaitStatus(ctx, false, last, 30*time.Second)
		if err != nil {
			if ctx.Err() == nil {
				time.Sleep(time.Second) // the node is going away; try again
			}
			continue
		}
		p.update(st)
		last = st
	}
}
