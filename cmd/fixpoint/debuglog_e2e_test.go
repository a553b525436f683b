package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// parseLogLines decodes `debug-log -o json`.
func parseLogLines(t *testing.T, r run) []model.LogLine {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("debug-log: %d\n%s", r.code, r.stderr)
	}
	var out []model.LogLine
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if l == "" {
			continue
		}
		var ll model.LogLine
		if err := json.Unmarshal([]byte(l), &ll); err != nil {
			t.Fatalf("debug-log -o json printed %q: %v", l, err)
		}
		out = append(out, ll)
	}
	return out
}

// parseEvents decodes `events -o json`.
func parseEvents(t *testing.T, r run) []model.Event {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("events: %d\n%s", r.code, r.stderr)
	}
	var out []model.Event
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var e model.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("events -o json printed %q: %v", l, err)
		}
		out = append(out, e)
	}
	return out
}

func keysOf(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sources(lines []model.LogLine) map[string]bool {
	out := map[string]bool{}
	for _, l := range lines {
		out[l.Source()] = true
	}
	return out
}

// A hook that floods stderr does not hold up the rest: the other
// service converges, the flood's lines are kept within the per-unit cap
// (the oldest dropped), the agent's drops are reported where they
// happened, and the filters, --tail and --replay select what they say.
// The log is still there after the control plane restarts.
func TestDebugLogFloodFiltersAndReplay(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	up := startProc(t, "up", "-f", repo("testdata", "envs", "flood.cue"), "--data-dir", data)
	rafttest.Eventually(t, 3*time.Minute, "chatty converged beside a 50 MB flood", func() error {
		st := statusOf(t, data)
		if st == nil {
			return holds(false, up.out.String())
		}
		return holds(st.Converged && st.Units["chatty/0"].Phase == engine.Settled && st.Units["flood/0"].Phase == engine.Settled, jsonString(st))
	})
	dl := func(args ...string) run {
		return fixpoint(t, time.Minute, append([]string{"debug-log", "--data-dir", data}, args...)...)
	}
	// The agent ships the flood's last lines after the run: wait for
	// the flood's end.
	var all []model.LogLine
	rafttest.Eventually(t, 3*time.Minute, "the flood's drop counts shipped", func() error {
		// Two replays alike: no line arrived while the first was read
		// (a replay reads page by page, and a line arriving meanwhile
		// evicts one the first page held).
		all = parseLogLines(t, dl("--replay", "-o", "json"))
		again := parseLogLines(t, dl("--replay", "-o", "json"))
		still := len(again) == len(all) && (len(all) == 0 || again[len(again)-1].Seq == all[len(all)-1].Seq)
		src := sources(all)
		return holds(still && src["chatty/0"] && src["chatty/1"] && floodDone(all),
			fmt.Sprintf("%d lines, the same in two replays: %v, chatty/0's and chatty/1's among them: %v %v, flood/0's last hook line: %q",
				len(all), still, src["chatty/0"], src["chatty/1"], lastHookLine(all, "flood/0")))
	})
	var floodBytes, total, dropped int
	for i, l := range all {
		if i > 0 && l.Seq <= all[i-1].Seq {
			t.Fatalf("replay out of order: %d after %d", l.Seq, all[i-1].Seq)
		}
		size := len(l.Message) + len(l.Unit) + len(l.Machine) + len(l.Node) + 64
		total += size
		if l.Unit == "flood/0" {
			floodBytes += size
			var n int
			if _, err := fmt.Sscanf(l.Message, "%d lines dropped", &n); err == nil {
				dropped += n
				if l.Level != "warning" {
					t.Errorf("drop count at level %s", l.Level)
				}
			}
		}
	}
	if floodBytes > model.LogBytesPerSource || total > model.LogBytesTotal {
		t.Fatalf("kept %d bytes of flood/0 (cap %d), %d in all (cap %d)", floodBytes, model.LogBytesPerSource, total, model.LogBytesTotal)
	}
	// The flood is many times the lines the agent's buffer holds (8192
	// by default), so more than that are dropped. The sum is of the
	// counts the store kept: older counts went with the lines the
	// per-source cap evicted, and how many the agent shipped first
	// depends on how fast the machine let it read.
	if dropped <= 8192 {
		t.Fatalf("the agent reported %d lines dropped of a 50 MB flood", dropped)
	}
	src := sources(all)
	for _, want := range []string{"chatty/0", "chatty/1", "flood/0", "machine local"} {
		if !src[want] {
			t.Errorf("no line of %s in the replay: %v", want, src)
		}
	}
	// Filters.
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--include", "chatty/1"}, []string{"chatty/1"}},
		{[]string{"--include", "chatty", "--exclude", "chatty/0"}, []string{"chatty/1"}},
		{[]string{"--include", "chatty/0,chatty/1"}, []string{"chatty/0", "chatty/1"}},
	} {
		got := sources(parseLogLines(t, dl(append(c.args, "--replay", "-o", "json")...)))
		if fmt.Sprint(keysOf(got)) != fmt.Sprint(c.want) {
			t.Errorf("debug-log %v: lines of %v; want %v", c.args, keysOf(got), c.want)
		}
	}
	// Without the units, what is left is the agent's and the node's own.
	for src := range sources(parseLogLines(t, dl("--exclude", "flood,chatty", "--replay", "-o", "json"))) {
		if !strings.HasPrefix(src, "machine ") && !strings.HasPrefix(src, "node ") {
			t.Errorf("--exclude flood,chatty shows lines of %s", src)
		}
	}
	warn := parseLogLines(t, dl("--include", "local", "--level", "warning", "--replay", "-o", "json"))
	for _, l := range warn {
		if l.Level != "warning" && l.Level != "error" {
			t.Errorf("--level warning showed %+v", l)
		}
	}
	if len(warn) == 0 {
		t.Error("--include local --level warning shows no drop count")
	}
	tail := parseLogLines(t, dl("--include", "chatty/0", "--tail", "2", "-o", "json"))
	replay0 := parseLogLines(t, dl("--include", "chatty/0", "--replay", "-o", "json"))
	if len(tail) != 2 || tail[1].Seq != replay0[len(replay0)-1].Seq {
		t.Errorf("--tail 2 of chatty/0: %+v; its replay ends with %+v", tail, replay0[len(replay0)-1])
	}
	text := dl("--include", "chatty/0", "--level", "info", "--replay")
	iso := regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)  chatty/0 +INFO +hook +chatty: hello from chatty/0$`)
	if !iso.MatchString(text.stdout) {
		t.Errorf("text output lacks an ISO-timed hook line of chatty/0:\n%s", text.stdout)
	}
	if r := dl("--level", "loud"); r.code == 0 || !strings.Contains(r.stderr, `"debug", "info", "warning" or "error"`) {
		t.Errorf("a bad level: %d %s", r.code, r.stderr)
	}
	// The log is in the Raft log and its snapshots: a restarted control
	// plane has every line, with the same numbers.
	up.stop(t)
	startProc(t, "up", "-f", repo("testdata", "envs", "flood.cue"), "--data-dir", data)
	rafttest.Eventually(t, 2*time.Minute, "up serving again", func() error { return holds(statusOf(t, data) != nil, "no status yet") })
	again := parseLogLines(t, dl("--include", "chatty/0", "--replay", "-o", "json"))
	if len(again) < len(replay0) || fmt.Sprint(again[:len(replay0)]) != fmt.Sprint(replay0) {
		t.Fatalf("after a restart chatty/0's log is\n%v\nwant it to start with\n%v", again, replay0)
	}
}

// floodDone reports whether the flood's end is in lines: the hook's
// last output is the line `head -c` cuts short, and the shipper either
// took it, after the counts of every line dropped before it, or dropped
// it too and counts it in a last "lines dropped" line. (The agent's own
// lines about the unit are not hook lines.)
func floodDone(lines []model.LogLine) bool {
	last := lastHookLine(lines, "flood/0")
	return strings.Contains(last, "lines dropped") || last == floodCutLine
}

// floodCutLine is the flood's last line: testdata/charms/flood prints
// 52428800 bytes of a 70-byte line, which leaves 60 bytes of it.
const floodCutLine = "flood: a hook that prints far more than anyone reads, line a"

// lastHookLine is the message of unit's last hook line in lines, "" if
// none.
func lastHookLine(lines []model.LogLine, unit string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].Unit == unit && lines[i].Origin == model.OriginHook {
			return lines[i].Message
		}
	}
	return ""
}

// A unit that fails, is retried, fixed and resolved has each step as an
// event, in order; show-unit ends with them; events and debug-log
// --follow print them as they happen.
func TestEventsOfAFailingThenResolvedUnit(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	up := startProc(t, "up", "-f", repo("testdata", "envs", "flaky.cue"), "--data-dir", data, "--retry-min", "300ms", "--retry-max", "600ms")
	rafttest.Eventually(t, 2*time.Minute, "up serving", func() error { return holds(statusOf(t, data) != nil, up.out.String()) })
	follow := startProc(t, "events", "flaky/0", "--follow", "--data-dir", data)
	logFollow := startProc(t, "debug-log", "--include", "flaky/0", "--follow", "--tail", "0", "--data-dir", data)
	rafttest.Eventually(t, 2*time.Minute, "flaky/0 retried after failing", func() error {
		st := statusOf(t, data)
		u := st.Units["flaky/0"]
		return holds(u != nil && u.Phase == engine.Error && u.Reconciles >= 2, jsonString(st))
	})
	rafttest.Eventually(t, time.Minute, "debug-log --follow printing the failing hook's stderr", func() error {
		out := logFollow.out.String()
		return holds(strings.Contains(out, "flaky/0") && strings.Contains(out, "backend not ready (create"), out)
	})
	if err := os.WriteFile(filepath.Join(data, "agent", "units", "flaky-0", "ok"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := fixpoint(t, time.Minute, "resolved", "flaky/0", "--data-dir", data)
	resolved := r.code == 0
	if !resolved && !strings.Contains(r.stderr, "not in error") {
		t.Fatalf("resolved flaky/0: %d %s", r.code, r.stderr)
	}
	rafttest.Eventually(t, 2*time.Minute, "flaky/0 recovered", func() error {
		u := statusOf(t, data).Units["flaky/0"]
		return holds(u != nil && u.Phase == engine.Settled, jsonString(u))
	})
	evs := parseEvents(t, fixpoint(t, time.Minute, "events", "flaky/0", "-o", "json", "--data-dir", data))
	var kinds []string
	for i, e := range evs {
		if e.Unit != "flaky/0" {
			t.Fatalf("events flaky/0 lists %+v", e)
		}
		if i > 0 && e.Kind != model.EventStarted && e.Time < evs[i-1].Time {
			t.Errorf("event %d at %d before the one before it at %d", i, e.Time, evs[i-1].Time)
		}
		if len(kinds) == 0 || kinds[len(kinds)-1] != e.Kind {
			kinds = append(kinds, e.Kind)
		}
	}
	seq := strings.Join(kinds, " ")
	want := regexp.MustCompile(`^created (leader )?started failed retry (started failed retry )*(resolved )?started succeeded status`)
	if !want.MatchString(seq) {
		t.Fatalf("event kinds of flaky/0: %s", seq)
	}
	has := func(kind, text string) bool {
		for _, e := range evs {
			if e.Kind == kind && strings.Contains(e.Message, text) {
				return true
			}
		}
		return false
	}
	for _, c := range [][2]string{
		{model.EventFailed, "backend not ready"},
		{model.EventRetry, "retrying in"},
		{model.EventSucceeded, "failed attempt(s); out of error"},
		{model.EventStatus, "active: recovered"},
	} {
		if !has(c[0], c[1]) {
			t.Errorf("no %s event saying %q: %s", c[0], c[1], jsonString(evs))
		}
	}
	if resolved && !has(model.EventResolved, "resolved: retrying now") {
		t.Errorf("resolved was accepted but is no event: %s", jsonString(evs))
	}
	// show-unit ends with the recent events, as kubectl describe does.
	su := fixpoint(t, time.Minute, "show-unit", "flaky/0", "--data-dir", data)
	i := strings.LastIndex(su.stdout, "\nevents:\n")
	if su.code != 0 || i < 0 || !strings.Contains(su.stdout[i:], "succeeded") || !strings.Contains(su.stdout[i:], "Warning  failed") {
		t.Fatalf("show-unit does not end with the events: %d\n%s\n%s", su.code, su.stdout, su.stderr)
	}
	rafttest.Eventually(t, time.Minute, "events --follow printing the recovery", func() error {
		out := follow.out.String()
		return holds(strings.Contains(out, "out of error") && strings.Contains(out, "Warning  failed"), out)
	})
	// A service's events are its units'.
	svc := parseEvents(t, fixpoint(t, time.Minute, "events", "flaky", "-o", "json", "--data-dir", data))
	units := map[string]bool{}
	for _, e := range svc {
		units[e.Unit] = true
	}
	if !units["flaky/0"] || !units["flaky/1"] || len(units) != 2 {
		t.Errorf("events flaky lists units %v", keysOf(units))
	}
}

// The debug log and the events are replicated: after the Raft leader is
// killed, the remaining nodes show the same lines and events with the
// same numbers, and the killed node, restarted, has them too.
func TestDebugLogAndEventsSurviveALeaderChange(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts four processes; skipped in -short")
	}
	c := startCluster(t, 3, false)
	m1 := c.agent("m1")
	rafttest.Eventually(t, time.Minute, "m1 registered", func() error {
		st := c.status()
		return holds(st != nil && st.Machines["m1"] != nil, m1.out.String())
	})
	if r := c.cli("apply", "-f", repo("testdata", "envs", "chatty.cue"), "--yes", "--wait", "--timeout", "3m"); r.code != 0 {
		t.Fatalf("apply: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var before []model.LogLine
	rafttest.Eventually(t, time.Minute, "chatty/0's stderr in the debug log", func() error {
		before = parseLogLines(t, c.cli("debug-log", "--include", "chatty/0", "--replay", "-o", "json"))
		for _, l := range before {
			if l.Message == "chatty: hello from chatty/0" && l.Machine == "m1" && l.Origin == model.OriginHook {
				return nil
			}
		}
		return holds(false, jsonString(before))
	})
	evBefore := parseEvents(t, c.cli("events", "chatty/0", "-o", "json"))
	li := c.leader()
	if li < 0 {
		t.Fatal("no Raft leader")
	}
	c.sigkill(li)
	c.waitLeader("a new Raft leader", li)
	startsWith := func(got, want any) bool {
		g, w := jsonString(got), jsonString(want)
		return strings.HasPrefix(g, strings.TrimSuffix(w, "]"))
	}
	after := parseLogLines(t, c.cli("debug-log", "--include", "chatty/0", "--replay", "-o", "json"))
	if !startsWith(after, before) {
		t.Fatalf("after the leader change chatty/0's log is\n%v\nwant it to start with\n%v", after, before)
	}
	if ev := parseEvents(t, c.cli("events", "chatty/0", "-o", "json")); !startsWith(ev, evBefore) {
		t.Fatalf("after the leader change chatty/0's events are\n%v\nwant them to start with\n%v", ev, evBefore)
	}
	// The new leader's node logs its election; the line reaches the log.
	rafttest.Eventually(t, time.Minute, "a node's lines in the debug log", func() error {
		lines := parseLogLines(t, c.cli("debug-log", "--exclude", "chatty,m1", "--replay", "-o", "json"))
		for _, l := range lines {
			if l.Node != "" && l.Origin == model.OriginNode {
				return nil
			}
		}
		return holds(false, jsonString(lines))
	})
	// The killed node restarts from its data dir and has them all.
	c.restart(li)
	c.waitCaughtUp("the restarted node caught up")
	own := parseLogLines(t, c.cliAt(c.addrs[li], "debug-log", "--include", "chatty/0", "--replay", "-o", "json"))
	if !startsWith(own, before) {
		t.Fatalf("the restarted node's chatty/0 log is\n%v\nwant it to start with\n%v", own, before)
	}
}
