package model

import (
	"strings"
	"testing"
	"time"
)

// A unit that fails, retries, is resolved and then succeeds has each step
// as an event, in order, stamped with its command's time; a leader
// election and a lost machine are events too, derived from the commands
// that cause them, not entries of their own.
func TestEventsOfAFailingThenResolvedUnit(t *testing.T) {
	s := NewState()
	store := NewEventStore()
	at := func(sec int) int64 { return time.Date(2026, 1, 2, 3, 4, sec, 0, time.UTC).UnixNano() }
	step := func(idx uint64, sec int, c *Command) {
		t.Helper()
		c.Time = at(sec)
		store.Add(apply(t, s, idx, c).Events())
	}
	step(1, 0, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "a", Address: "10.0.0.1"}})
	step(2, 1, deployCmd(env(nil)))
	step(3, 5, &Command{Op: OpResults, Results: []Result{{Unit: "web/0", Hash: "h1", Started: at(3), Error: "hook reconcile exited with status 1: boom", RetryAt: at(15)}}})
	step(4, 20, &Command{Op: OpResults, Results: []Result{{Unit: "web/0", Hash: "h1", Error: "hook reconcile exited with status 1: boom", RetryAt: at(40)}}})
	step(5, 25, &Command{Op: OpResolve, Resolve: &ResolveUnit{Unit: "web/0"}})
	step(6, 30, &Command{Op: OpResults, Results: []Result{{Unit: "web/0", Hash: "h1", Started: at(28), Seen: &Seen{Life: Alive}, Status: &Status{State: "active", Message: "ready"}}}})
	step(7, 40, &Command{Op: OpLiveness, Liveness: &SetLiveness{Lost: map[string]bool{"a": true}}})
	step(8, 50, &Command{Op: OpLiveness, Liveness: &SetLiveness{Lost: map[string]bool{}}})

	got, _ := store.Read(0, func(k string) bool { return k == "web/0" }, nil, 0, false)
	var lines []string
	for _, e := range got {
		lines = append(lines, time.Unix(0, e.Time).UTC().Format("05")+" "+e.Kind+" "+e.Message)
	}
	want := []string{
		"01 created unit added",
		"01 leader elected leader of web",
		"05 started hook run started on universe h1",
		"05 failed hook failed (attempt 1): hook reconcile exited with status 1: boom",
		"05 retry retrying in 10s (attempt 2)",
		"20 failed hook failed (attempt 2): hook reconcile exited with status 1: boom",
		"20 retry retrying in 20s (attempt 3)",
		"25 resolved resolved: retrying now",
		"30 started hook run started on universe h1",
		"30 succeeded hook succeeded after 2 failed attempt(s); out of error",
		"30 status workload status active: ready",
		"40 machine-lost machine a lost: its agent stopped answering",
		"50 machine-back machine a back: its agent answers again",
	}
	// started carries the run's own start, not its result's time.
	want[2], want[8] = "03"+want[2][2:], "28"+want[8][2:]
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events of web/0:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// The leader's events follow elections: the first unit to qualify is
// elected; losing its machine hands leadership on, and says so on both.
func TestEventsOfLeadership(t *testing.T) {
	s := NewState()
	store := NewEventStore()
	for i, c := range []*Command{
		{Op: OpMachine, Machine: &RegisterMachine{Name: "a", Address: "10.0.0.1"}},
		{Op: OpMachine, Machine: &RegisterMachine{Name: "b", Address: "10.0.0.2"}},
		deployCmd(env(nil)),
	} {
		c.Time = int64(i + 1)
		store.Add(apply(t, s, uint64(i+1), c).Events())
	}
	leader := s.Services["web"].Leader
	lost := s.Units[leader].Machine
	c := &Command{Op: OpLiveness, Time: 9, Liveness: &SetLiveness{Lost: map[string]bool{lost: true}}}
	store.Add(apply(t, s, 4, c).Events())
	next := s.Services["web"].Leader
	if next == leader || next == "" {
		t.Skipf("both web units are on machine %s: no other can lead", lost)
	}
	kinds := func(unit string) string {
		got, _ := store.Read(0, func(k string) bool { return k == unit }, nil, 0, false)
		var out []string
		for _, e := range got {
			if e.Kind == EventLeader {
				out = append(out, e.Message)
			}
		}
		return strings.Join(out, "; ")
	}
	if got := kinds(leader); got != "elected leader of web; no longer the leader of web (now "+next+")" {
		t.Errorf("%s's leader events: %s", leader, got)
	}
	if got := kinds(next); got != "elected leader of web" {
		t.Errorf("%s's leader events: %s", next, got)
	}
}

// A refused command derives no events.
func TestEventsOfARefusedCommand(t *testing.T) {
	s := NewState()
	apply(t, s, 1, deployCmd(env(nil)))
	resp, err := s.Apply(2, &Command{Op: OpResolve, Resolve: &ResolveUnit{Unit: "web/9"}})
	if err == nil && len(resp.Events()) > 0 {
		t.Fatalf("events of a resolve of no unit: %+v", resp.Events())
	}
}
