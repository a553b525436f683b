package sim

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
)

// Report is what a simulation found.
type Report struct {
	Env  string
	Seed uint64
	// Schedules are the schedules run, in order.
	Schedules []*Schedule
	// FixedPoints are the distinct fixed points the converging schedules
	// reached, most common first. One is what a charm author wants.
	FixedPoints []*FixedPoint
	// Nondeterministic lists units whose hook returned different results
	// for the same universe.
	Nondeterministic []*Nondeterminism
	// Generated lists the keys units generated once and read back after
	// (generated.go): their values differ between runs without that
	// counting as non-determinism or as different fixed points.
	Generated []GeneratedKey
	// Unmet lists the units whose status at a fixed point is not what
	// their service's expectation (Service.Expect) names; Expected says
	// whether any service has one.
	Unmet    []*Unmet
	Expected bool
	// Replay formats, from the seed and a schedule's index, how to run
	// that schedule again; `fixpoint charm test` sets its command line.
	Replay func(seed uint64, schedule int) string
}

// Schedule is one run of the environment to its end.
type Schedule struct {
	Index int
	// Style is StyleLockstep, StyleSerial or StyleRandom.
	Style string
	// Converged is true when the schedule ended with no unit stale and
	// none in error.
	Converged bool
	// Reconciles counts hook runs; Steps counts applied result batches.
	Reconciles, Steps int
	// Cut is set when the schedule was stopped at MaxReconciles.
	Cut bool
	// Digest identifies the final settings; Final lists them, one key
	// per setting ("db/0 relations.db:1.local.host", "db
	// relations.cluster:0.app.primary", "web/0 status", ...).
	Digest string
	Final  map[string]string
	// Errors are the units in error at the end, with the engine's
	// message (a diverged unit's names the keys that kept changing).
	Errors map[string]string
	// Cycle is what kept repeating when the schedule did not converge.
	Cycle *Cycle
	// Churn lists, when there is no cycle, the keys that changed over
	// the last steps: they take new values forever (a timestamp?).
	Churn []Key
	// Trace is every step, with Options.Trace.
	Trace []Step
	// Actions are what Options.Actions came to, in order: an action not
	// run (the schedule was cut before it) is not there.
	Actions []*model.Action

	state *model.State
	calls []callRecord
}

// Step is one batch of results applied, and what it changed.
type Step struct {
	N       int
	Units   []string
	Changes []engine.Change
}

// Cycle is a stretch of steps after which the settings are what they were
// before it: with the schedule's order, the units go round it forever.
type Cycle struct {
	// From and To are the step numbers whose settings are equal.
	From, To int
	Steps    []Step
	// Keys are the settings that change in the cycle, and who writes
	// them.
	Keys []Key
}

// Key is one setting and how often it changed.
type Key struct {
	Key     string
	Writer  string
	Changes int
}

// FixedPoint is one outcome reached by converging schedules.
type FixedPoint struct {
	Digest    string
	Schedules []int
	Settings  map[string]string
}

// Nondeterminism is a unit whose hook returned two different results for
// the same universe.
type Nondeterminism struct {
	Unit      string
	Schedules [2]int
	// Diff lists the result fields that differ, first run to second.
	Diff []engine.Change
}

// Universe returns what unit sees in the schedule's final state, as the
// engine builds it: at a fixed point, the universe it settled on.
func (s *Schedule) Universe(unit string) *charmapi.Universe {
	if s.state == nil {
		return nil
	}
	u, _ := engine.Build(s.state, unit)
	return u
}

// OK reports whether every schedule converged, all to the same fixed
// point that meets every expectation, and every hook returned the same
// result for the same universe.
func (r *Report) OK() bool {
	return r.Converged() == len(r.Schedules) && len(r.FixedPoints) == 1 && len(r.Nondeterministic) == 0 && len(r.Unmet) == 0
}

// Converged counts the schedules that reached a fixed point.
func (r *Report) Converged() int {
	n := 0
	for _, s := range r.Schedules {
		if s.Converged {
			n++
		}
	}
	return n
}

// Reconciles returns the hook runs of the converging schedules, sorted.
func (r *Report) Reconciles() []int {
	var out []int
	for _, s := range r.Schedules {
		if s.Converged {
			out = append(out, s.Reconciles)
		}
	}
	sort.Ints(out)
	return out
}

// Failed returns the schedules that did not converge.
func (r *Report) Failed() []*Schedule {
	var out []*Schedule
	for _, s := range r.Schedules {
		if !s.Converged {
			out = append(out, s)
		}
	}
	return out
}

// Keys returns every key named as not settling: in the cycles and churn
// of failed schedules, and in the results that differ for one universe.
func (r *Report) Keys() []string {
	set := map[string]bool{}
	for _, s := range r.Failed() {
		if s.Cycle != nil {
			for _, k := range s.Cycle.Keys {
				set[k.Key] = true
			}
		}
		for _, k := range s.Churn {
			set[k.Key] = true
		}
	}
	for _, n := range r.Nondeterministic {
		for _, c := range n.Diff {
			set[n.Unit+" "+c.Key] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// summarize groups fixed points and finds non-determinism across
// schedules, in schedule order so the report depends on the seed alone.
func (r *Report) summarize() {
	var repl map[string]string
	r.Generated, repl = generated(r.Schedules)
	byDigest := map[string]*FixedPoint{}
	for _, s := range r.Schedules {
		if !s.Converged {
			continue
		}
		// Schedules that differ only in generated values share a fixed
		// point, whose digest is that of its settings with the values
		// named.
		digest := s.Digest
		if len(repl) > 0 {
			digest = digestFlat(canonical(s.Final, repl))
		}
		fp := byDigest[digest]
		if fp == nil {
			fp = &FixedPoint{Digest: digest, Settings: s.Final}
			byDigest[digest] = fp
			r.FixedPoints = append(r.FixedPoints, fp)
		}
		fp.Schedules = append(fp.Schedules, s.Index)
	}
	sort.SliceStable(r.FixedPoints, func(i, j int) bool {
		return len(r.FixedPoints[i].Schedules) > len(r.FixedPoints[j].Schedules)
	})
	type first struct {
		sched  int
		out    string
		result map[string]string
	}
	seen := map[string]first{}
	reported := map[string]bool{}
	for _, s := range r.Schedules {
		for _, c := range s.calls {
			if c.check {
				// Run only to see what the unit reads back: an
				// update-status there may rightly say something new.
				continue
			}
			key := c.unit + "\x00" + c.in
			f, ok := seen[key]
			if !ok {
				seen[key] = first{s.Index, c.out, c.result}
				continue
			}
			if f.out == c.out || reported[c.unit] || maps.Equal(canonical(f.result, repl), canonical(c.result, repl)) {
				continue
			}
			reported[c.unit] = true
			r.Nondeterministic = append(r.Nondeterministic, &Nondeterminism{
				Unit: c.unit, Schedules: [2]int{f.sched, s.Index}, Diff: diffFlat(f.result, c.result)})
		}
	}
	sort.Slice(r.Nondeterministic, func(i, j int) bool {
		return charmapi.UnitLess(r.Nondeterministic[i].Unit, r.Nondeterministic[j].Unit)
	})
}

// String is the report for a person: what converged, how fast, and what
// did not, with the cycle and the keys involved.
func (r *Report) String() string {
	var b strings.Builder
	units := 0
	var names []string
	if len(r.Schedules) > 0 && r.Schedules[0].state != nil {
		names = r.Schedules[0].state.SortedUnits()
		units = len(names)
	}
	first := 0
	if len(r.Schedules) > 0 {
		first = r.Schedules[0].Index
	}
	fmt.Fprintf(&b, "environment %q: %d unit(s) (%s); %d schedule(s) from #%d, seed %d\n", r.Env, units, strings.Join(names, " "), len(r.Schedules), first, r.Seed)
	if len(r.Schedules) > 0 && r.Schedules[0].state != nil {
		if res := resourceSummary(r.Schedules[0].state); res != "" {
			fmt.Fprintf(&b, "resources: %s\n", res)
		}
	}
	conv := r.Converged()
	switch {
	case conv == len(r.Schedules) && len(r.FixedPoints) == 1:
		fmt.Fprintf(&b, "converged: %d of %d schedules, all to the same fixed point (settings %s)\n", conv, len(r.Schedules), r.FixedPoints[0].Digest)
	default:
		fmt.Fprintf(&b, "converged: %d of %d schedules", conv, len(r.Schedules))
		if len(r.FixedPoints) > 1 {
			fmt.Fprintf(&b, ", to %d different fixed points", len(r.FixedPoints))
		}
		b.WriteString("\n")
	}
	if rc := r.Reconciles(); len(rc) > 0 {
		fmt.Fprintf(&b, "reconciles per converging schedule: min %d, median %d, p90 %d, max %d", rc[0], rc[(len(rc)-1)/2], rc[(len(rc)*9+9)/10-1], rc[len(rc)-1])
		var styles []string
		for _, s := range r.Schedules {
			if s.Converged && s.Style != StyleRandom {
				styles = append(styles, fmt.Sprintf("%s %d", s.Style, s.Reconciles))
			}
		}
		if len(styles) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(styles, ", "))
		}
		b.WriteString("\n")
	}
	r.writeFinal(&b)
	if len(r.FixedPoints) > 1 {
		a, c := r.FixedPoints[0], r.FixedPoints[1]
		fmt.Fprintf(&b, "\nnot one fixed point: %d schedule(s) end at settings %s (%s), %d at %s (%s); they differ in:\n",
			len(a.Schedules), a.Digest, listInts(a.Schedules), len(c.Schedules), c.Digest, listInts(c.Schedules))
		b.WriteString(indent(changeLines(diffFlat(a.Settings, c.Settings))))
		b.WriteString("\n  the outcome depends on the order units ran in: a hook must not decide from who answered first\n")
	}
	if failed := r.Failed(); len(failed) > 0 {
		b.WriteString("\n")
		r.writeFailure(&b, failed[0])
		// The others, grouped by what went wrong.
		var order []string
		groups := map[string][]int{}
		for _, s := range failed[1:] {
			sum := s.summary()
			if groups[sum] == nil {
				order = append(order, sum)
			}
			groups[sum] = append(groups[sum], s.Index)
		}
		if len(order) > 0 {
			b.WriteString("also did not converge:\n")
		}
		for i, sum := range order {
			if i == 8 {
				fmt.Fprintf(&b, "  ... and %d more kinds of failure\n", len(order)-i)
				break
			}
			fmt.Fprintf(&b, "  %d schedule(s) (%s): %s\n", len(groups[sum]), listInts(groups[sum]), sum)
		}
	}
	if len(r.Generated) > 0 {
		b.WriteString("\ngenerated once and read back after (their values differ between runs; not counted as divergence):\n")
		for _, g := range r.Generated {
			fmt.Fprintf(&b, "  %s %s\n", g.Unit, g.Key)
		}
	}
	if len(r.Nondeterministic) > 0 {
		b.WriteString("\nnot a function of its universe:\n")
		for _, n := range r.Nondeterministic {
			how := fmt.Sprintf("schedules #%d and #%d", n.Schedules[0], n.Schedules[1])
			if n.Schedules[0] == n.Schedules[1] {
				how = fmt.Sprintf("schedule #%d", n.Schedules[0])
			}
			fmt.Fprintf(&b, "  %s returned different results for the same universe (%s):\n", n.Unit, how)
			b.WriteString(indent(indent(changeLines(n.Diff))))
			b.WriteString("\n")
		}
		b.WriteString("  " + NondeterminismHint + "\n")
	}
	for _, s := range r.Schedules {
		if len(s.Trace) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\ntrace of schedule #%d (%s):\n", s.Index, s.Style)
		for _, st := range s.Trace {
			writeStep(&b, st)
		}
	}
	if r.OK() {
		b.WriteString("OK\n")
	} else {
		b.WriteString("FAIL\n")
	}
	return b.String()
}

func (s *Schedule) summary() string {
	var parts []string
	if len(s.Errors) > 0 {
		parts = append(parts, "units in error: "+strings.Join(sortedUnits(s.Errors), ", "))
	}
	if s.Cut {
		parts = append(parts, fmt.Sprintf("stopped after %d reconciles", s.Reconciles))
	}
	if s.Cycle != nil {
		parts = append(parts, fmt.Sprintf("cycle of %d step(s) over %s", len(s.Cycle.Steps), keyList(s.Cycle.Keys)))
	} else if len(s.Churn) > 0 {
		parts = append(parts, "never settling: "+keyList(s.Churn))
	}
	return strings.Join(parts, "; ")
}

func (r *Report) writeFailure(b *strings.Builder, s *Schedule) {
	fmt.Fprintf(b, "schedule #%d (%s) did not converge: %d reconciles in %d steps", s.Index, s.Style, s.Reconciles, s.Steps)
	if s.Cut {
		b.WriteString(", stopped at the simulation's bound")
	}
	b.WriteString("\n")
	if len(s.Errors) > 0 {
		b.WriteString("  units in error (as the engine would put them):\n")
		for _, u := range sortedUnits(s.Errors) {
			fmt.Fprintf(b, "    %s: %s\n", u, strings.ReplaceAll(strings.TrimSpace(s.Errors[u]), "\n", "\n      "))
		}
	}
	if c := s.Cycle; c != nil {
		fmt.Fprintf(b, "  cycle: the settings after step %d are those after step %d; in between:\n", c.To, c.From)
		for _, st := range c.Steps {
			writeStepIndented(b, st, "    ")
		}
		b.WriteString("  keys that keep changing, and who writes them:\n")
		for _, k := range c.Keys {
			fmt.Fprintf(b, "    %s (written by %s, %d change(s) per cycle)\n", k.Key, k.Writer, k.Changes)
		}
	} else if len(s.Churn) > 0 {
		b.WriteString("  no cycle: the settings never came back to an earlier state; keys still changing at the end:\n")
		for _, k := range s.Churn {
			fmt.Fprintf(b, "    %s (written by %s, %d change(s) in the last steps)\n", k.Key, k.Writer, k.Changes)
		}
	}
	replay := r.Replay
	if replay == nil {
		replay = func(seed uint64, i int) string {
			return fmt.Sprintf("Options{Seed: %d, From: %d, Schedules: 1, Trace: true}", seed, i)
		}
	}
	fmt.Fprintf(b, "  replay it with the whole trace: %s\n", replay(r.Seed, s.Index))
}

func writeStep(b *strings.Builder, st Step) { writeStepIndented(b, st, "  ") }

func writeStepIndented(b *strings.Builder, st Step, in string) {
	fmt.Fprintf(b, "%sstep %d: results of %s\n", in, st.N, strings.Join(st.Units, ", "))
	if len(st.Changes) == 0 {
		fmt.Fprintf(b, "%s  (no change)\n", in)
	}
	for _, c := range st.Changes {
		fmt.Fprintf(b, "%s  %s: %s -> %s\n", in, c.Key, c.Old, c.New)
	}
}

func keyList(keys []Key) string {
	var names []string
	for _, k := range keys {
		names = append(names, k.Key)
	}
	if len(names) > 4 {
		names = append(names[:4], fmt.Sprintf("and %d more", len(names)-4))
	}
	return strings.Join(names, ", ")
}

func sortedUnits[V any](m map[string]V) []string {
	names := slices.Collect(maps.Keys(m))
	charmapi.SortUnits(names)
	return names
}

func listInts(xs []int) string {
	var parts []string
	for i, x := range xs {
		if i == 6 {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, "#"+strconv.Itoa(x))
	}
	return strings.Join(parts, " ")
}

func changeLines(cs []engine.Change) string {
	var lines []string
	for _, c := range cs {
		lines = append(lines, fmt.Sprintf("%s: %s -> %s", c.Key, c.Old, c.New))
	}
	return strings.Join(lines, "\n")
}

func indent(s string) string {
	if s == "" {
		return s
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
