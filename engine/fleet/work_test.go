package fleet_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// envsOf lists the environments of work, sorted.
func envsOf(work []wire.Work) []string {
	var out []string
	for _, w := range work {
		out = append(out, w.Env+":"+w.Unit)
	}
	sort.Strings(out)
	return out
}

// TestPollServesEveryEnvironment: an agent that keeps environments apart
// is handed each environment's stale db/0, named with its environment
// and uuid, within its free slots; each report lands in its own
// environment alone.
func TestPollServesEveryEnvironment(t *testing.T) {
	ctx, s, f, uuid := setup(t)
	one, err := f.WaitForWork(ctx, "m1", 1, 30*time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(one) != 1 {
		t.Fatalf("a poll with one free slot was handed %v", envsOf(one))
	}
	rest, err := f.WaitForWork(ctx, "m1", 10, 30*time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	work := append(one, rest...)
	if got := envsOf(work); len(got) != 2 || got[0] != ":db/0" || got[1] != "dev:db/0" {
		t.Fatalf("handed %v; want db/0 of the default environment and of dev", got)
	}
	for _, w := range work {
		if w.Env == "dev" && w.EnvUUID != uuid {
			t.Errorf("dev's work carries uuid %q; want %q", w.EnvUUID, uuid)
		}
	}
	for _, w := range work {
		if w.Env != "dev" {
			continue
		}
		if _, err := f.Accept(ctx, "m1", []wire.Report{report(w)}); err != nil {
			t.Fatal(err)
		}
	}
	if reconciles(t, s, "dev") != 1 || reconciles(t, s, "") != 0 {
		t.Fatalf("reconciles of db/0: dev %d, default %d; want dev's run in dev alone", reconciles(t, s, "dev"), reconciles(t, s, ""))
	}
	for _, w := range work {
		if w.Env != "" {
			continue
		}
		if _, err := f.Accept(ctx, "m1", []wire.Report{report(w)}); err != nil {
			t.Fatal(err)
		}
	}
	if reconciles(t, s, "dev") != 1 || reconciles(t, s, "") != 1 {
		t.Fatalf("reconciles of db/0: dev %d, default %d; want one each", reconciles(t, s, "dev"), reconciles(t, s, ""))
	}
	resp, err := f.Accept(ctx, "m1", []wire.Report{{Unit: "db/0", Hash: "h", Env: "nowhere"}})
	if err != nil || len(resp.Skipped) != 1 {
		t.Fatalf("a report of an environment that does not exist: %+v, %v; want it skipped", resp, err)
	}
}

// TestAgentWithoutEnvironmentsGetsDefaultWorkOnly is the safety gate: an
// agent that does not declare it keeps environments apart (every agent
// built before environments) would run dev's db/0 in the default one's
// directory, so its polls are handed the default environment's work
// alone, while dev's db/0 stays stale for an agent that declares it.
func TestAgentWithoutEnvironmentsGetsDefaultWorkOnly(t *testing.T) {
	ctx, _, f, _ := setup(t)
	work, err := f.WaitForWork(ctx, "m1", 10, 30*time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := envsOf(work); len(got) != 1 || got[0] != ":db/0" {
		t.Fatalf("an agent without environments was handed %v; want the default environment's db/0 alone", got)
	}
	if more, err := f.WaitForWork(ctx, "m1", 10, 200*time.Millisecond, false); err != nil || len(more) != 0 {
		t.Fatalf("an agent without environments was handed %v, %v; want nothing: dev's work is not for it", envsOf(more), err)
	}
	dev, err := f.WaitForWork(ctx, "m1", 10, 30*time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := envsOf(dev); len(got) != 1 || got[0] != "dev:db/0" {
		t.Fatalf("an agent with environments was handed %v; want dev's db/0", got)
	}
}

// TestChangeInOneEnvironmentCostsOthersNothing: a change in the default
// environment rebuilds no universe of dev and wakes no poll of dev's, as
// the fleet's per-environment WorkStats count, while an agent's poll
// waits on both, asleep once on its machine's shared signal and in
// neither controller; the change wakes that poll alone, not another
// machine's.
func TestChangeInOneEnvironmentCostsOthersNothing(t *testing.T) {
	ctx, s, f, _ := setup(t)
	for handed := 0; handed < 2; {
		work, err := f.WaitForWork(ctx, "m1", 10, 30*time.Second, true)
		if err != nil {
			t.Fatal(err)
		}
		handed += len(work)
		var reports []wire.Report
		for _, w := range work {
			reports = append(reports, report(w))
		}
		if _, err := f.Accept(ctx, "m1", reports); err != nil {
			t.Fatal(err)
		}
	}
	if reconciles(t, s, "dev") != 1 || reconciles(t, s, "") != 1 {
		t.Fatalf("reconciles of db/0: dev %d, default %d; want one each", reconciles(t, s, "dev"), reconciles(t, s, ""))
	}
	// A machine with no unit anywhere polls too: no change is its.
	idle, stop := context.WithCancel(ctx)
	defer stop()
	idled := make(chan error, 1)
	go func() {
		_, err := f.WaitForWork(idle, "m9", 10, time.Minute, true)
		idled <- err
	}()
	rafttest.Until(t, time.Minute, "m9's poll asleep", func() bool { return f.Polls().Asleep == 1 })
	before, polls := f.Stats(), f.Polls()
	// A poll waits on both environments; the change wakes it with the
	// default environment's db/1.
	polled := make(chan []wire.Work, 1)
	go func() {
		work, err := f.WaitForWork(ctx, "m1", 10, time.Minute, true)
		if err != nil {
			t.Error(err)
		}
		polled <- work
	}()
	rafttest.Until(t, time.Minute, "m1's poll asleep", func() bool { return f.Polls().Asleep == 2 })
	if st := f.Stats(); st[""].Asleep != 0 || st["dev"].Asleep != 0 {
		t.Errorf("polls asleep in the default environment's controller %d, in dev's %d; want none: they sleep on the machine's shared signal",
			st[""].Asleep, st["dev"].Asleep)
	}
	if _, err := s.Env("").Apply(ctx, deployIn("", 2)); err != nil {
		t.Fatal(err)
	}
	work := <-polled
	if got := envsOf(work); len(got) != 1 || got[0] != ":db/1" {
		t.Fatalf("the change handed %v; want the default environment's db/1", got)
	}
	after := f.Stats()
	if d, b := after["dev"], before["dev"]; d.Rebuilt != b.Rebuilt || d.HashedBytes != b.HashedBytes || d.Wakeups != b.Wakeups {
		t.Errorf("a change in the default environment cost dev %d universes rebuilt and %d polls woken; want none",
			d.Rebuilt-b.Rebuilt, d.Wakeups-b.Wakeups)
	}
	if after[""].Rebuilt == before[""].Rebuilt || after[""].Wakeups == before[""].Wakeups {
		t.Errorf("the change rebuilt %d universes and woke %d polls of the default environment; want some of each",
			after[""].Rebuilt-before[""].Rebuilt, after[""].Wakeups-before[""].Wakeups)
	}
	if got := f.Polls(); got.Wakeups-polls.Wakeups != 1 || got.Asleep != 1 {
		t.Errorf("the change woke %d polls and left %d asleep; want m1's woken and m9's asleep", got.Wakeups-polls.Wakeups, got.Asleep)
	}
	stop()
	if err := <-idled; err != context.Canceled {
		t.Errorf("m9's poll, ended: %v; want context.Canceled", err)
	}
	if got := f.Polls().Asleep; got != 0 {
		t.Errorf("%d polls asleep after both ended; want none", got)
	}
}

// TestFleetFollowsEnvironments: an environment added gets a controller,
// one removed loses it, and a poll waiting on it meanwhile is answered by
// the others as if it had never been.
func TestFleetFollowsEnvironments(t *testing.T) {
	ctx, s, f, _ := setup(t)
	addEnv(t, ctx, s, f, "tmp")
	if got := f.Envs(); len(got) != 3 {
		t.Fatalf("fleet runs %q; want the default environment, dev and tmp", got)
	}
	for handed := 0; handed < 2; {
		work, err := f.WaitForWork(ctx, "m1", 10, 30*time.Second, true)
		if err != nil {
			t.Fatal(err)
		}
		handed += len(work)
	}
	polled := make(chan error, 1)
	var work []wire.Work
	go func() {
		var err error
		work, err = f.WaitForWork(ctx, "m1", 10, time.Minute, true)
		polled <- err
	}()
	rafttest.Until(t, time.Minute, "the poll asleep", func() bool { return f.Polls().Asleep == 1 })
	if err := s.RemoveEnv(ctx, "tmp"); err != nil {
		t.Fatal(err)
	}
	rafttest.Until(t, time.Minute, "tmp's controller stopped", func() bool { return f.Controller("tmp") == nil })
	if f.Controller("dev") == nil || f.Default() == nil {
		t.Fatalf("fleet runs %q after tmp's removal; want the default environment and dev", f.Envs())
	}
	if _, err := s.Env("").Apply(ctx, deployIn("", 2)); err != nil {
		t.Fatal(err)
	}
	if err := <-polled; err != nil {
		t.Fatalf("a poll waiting while tmp was removed: %v", err)
	}
	if got := envsOf(work); len(got) != 1 || got[0] != ":db/1" {
		t.Fatalf("the poll was handed %v; want the default environment's db/1", got)
	}
}
