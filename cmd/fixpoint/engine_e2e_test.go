package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

func TestDivergenceIsReportedWithTheKeys(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"oscillate": {"unit oscillate-", "diverged", "relations.flip:0.units.oscillate-", "(written by oscillate-"},
		"clock":     {"unit clock/", "diverged", ".now (written by clock/"},
	}
	for env, wants := range cases {
		t.Run(env, func(t *testing.T) {
			t.Parallel()
			r := fixpoint(t, 5*time.Minute, "up", "-f", repo("testdata", "envs", env+".cue"), "--data-dir", t.TempDir(), "--until-converged", "--timeout", "4m")
			if r.code != exitUnitErr {
				t.Fatalf("up exited %d, want %d:\n%s\n%s", r.code, exitUnitErr, r.stdout, r.stderr)
			}
			for _, w := range wants {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

func TestRetryBackoffAndResolved(t *testing.T) {
	data := t.TempDir()
	up := startProc(t, "up", "-f", repo("testdata", "envs", "flaky.cue"), "--data-dir", data, "--retry-min", "300ms", "--retry-max", "600ms")
	// Failing hooks are retried on their own: the attempt count grows.
	rafttest.Eventually(t, 2*time.Minute, "flaky/0 retried after failing", func() error {
		st := statusOf(t, data)
		if st == nil {
			return errors.New(up.out.String())
		}
		u := st.Units["flaky/0"]
		return holds(u != nil && u.Phase == engine.Error && strings.Contains(u.Error, "backend not ready") && u.Reconciles >= 3, jsonString(st))
	})
	// Resolving a healthy unit, or an unknown one, is refused.
	if r := fixpoint(t, time.Minute, "resolved", "nosuch/0", "--data-dir", data); r.code == 0 || !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("resolved on an unknown unit: %d %s", r.code, r.stderr)
	}
	// Fix flaky/0's backend and retry it now.
	if err := os.WriteFile(filepath.Join(data, "agent", "units", "flaky-0", "ok"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// The automatic retry, at most --retry-max away, may run first: then
	// resolved is refused because the unit is no longer in error, and the
	// unit must already have recovered.
	if r := fixpoint(t, time.Minute, "resolved", "flaky/0", "--data-dir", data); r.code != 0 {
		if !strings.Contains(r.stderr, "is not in error") {
			t.Fatalf("resolved flaky/0: %d %s", r.code, r.stderr)
		}
		if u := statusOf(t, data).Units["flaky/0"]; u == nil || u.Phase == engine.Error {
			t.Fatalf("resolved flaky/0 was refused as not in error, but status says %+v", u)
		}
	}
	// Accept flaky/1's failed universe without running it again.
	if r := fixpoint(t, time.Minute, "resolved", "flaky/1", "--no-retry", "--data-dir", data); r.code != 0 {
		t.Fatalf("resolved --no-retry flaky/1: %d %s", r.code, r.stderr)
	}
	// A retry in flight when the resolve applied may still report; its
	// failure is dropped and counts no run.
	before := statusOf(t, data).Units["flaky/1"].Reconciles
	rafttest.Eventually(t, 2*time.Minute, "both units settled", func() error {
		st := statusOf(t, data)
		return holds(st != nil && st.Converged, jsonString(st))
	})
	st := statusOf(t, data)
	if got := st.Units["flaky/0"].Status.Message; got != "recovered" {
		t.Errorf("flaky/0 says %q, want recovered", got)
	}
	// --no-retry itself runs nothing, so flaky/1 never recovered.
	if u := st.Units["flaky/1"]; u.Reconciles != before || u.Status.Message == "recovered" {
		t.Errorf("flaky/1 ran after --no-retry: %+v (had %d runs)", u, before)
	}
	if r := fixpoint(t, time.Minute, "resolved", "flaky/0", "--data-dir", data); r.code == 0 || !strings.Contains(r.stderr, "not in error") {
		t.Errorf("resolved on a settled unit: %d %s", r.code, r.stderr)
	}
}

func TestLeadershipMovesWhenTheLeadersAgentDies(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	up := startProc(t, "up", "-f", repo("testdata", "envs", "leader.cue"), "--data-dir", data, "--agent-ttl", "2s")
	rafttest.Eventually(t, 2*time.Minute, "up serving", func() error { return holds(statusOf(t, data) != nil, up.out.String()) })
	addr := readEndpoint(t, data)
	join := readFile(t, filepath.Join(data, joinTokenFile))
	// m1 first, so that db/0 on m1 is the first unit able to lead.
	m1 := startProc(t, "agent", "--controller", addr, "--machine", "m1", "--data-dir", t.TempDir(), "--address", "127.0.0.1", "--token", join)
	rafttest.Eventually(t, time.Minute, "m1 registered", func() error {
		st := statusOf(t, data)
		return holds(st != nil && st.Machines["m1"] != nil, m1.out.String())
	})
	startProc(t, "agent", "--controller", addr, "--machine", "m2", "--data-dir", t.TempDir(), "--address", "127.0.0.1", "--token", join)
	rafttest.Eventually(t, 2*time.Minute, "converged with db/0 leading", func() error {
		st := statusOf(t, data)
		return holds(st != nil && st.Converged && st.Units["db/0"].Leader && st.Units["db/0"].Status.Message == "primary, 1 client", jsonString(st))
	})
	// Kill the leader's agent: after the TTL its machine is lost, the
	// leadership moves to db/1, and the rest reconverges around it.
	m1.kill()
	rafttest.Eventually(t, 2*time.Minute, "db/1 leads and the environment reconverged", func() error {
		st := statusOf(t, data)
		if st == nil {
			return errors.New("")
		}
		ok := st.Converged && st.Units["db/1"].Leader && !st.Units["db/0"].Leader &&
			st.Units["db/0"].Agent == "lost" && strings.HasPrefix(st.Units["db/1"].Status.Message, "primary") &&
			st.Units["web/0"].Phase == engine.Settled
		return holds(ok, jsonString(st))
	})
	// The metrics count the lost machine, and its units apart from the
	// phases, as status's summary does.
	st := statusOf(t, data)
	lostUnits := 0
	for _, u := range st.Units {
		if u.Agent == "lost" {
			lostUnits++
		}
	}
	m := metricValues(t, addr)
	if m[`fixpoint_machines{state="lost"}`] != 1 || m[`fixpoint_machines{state="started"}`] != float64(len(st.Machines)-1) ||
		m[`fixpoint_units{phase="lost"}`] != float64(lostUnits) || m["fixpoint_converged"] != 1 {
		t.Errorf("metrics with m1 lost of %d machines (%d units on it): machines lost %v, started %v; units lost %v; converged %v", len(st.Machines), lostUnits,
			m[`fixpoint_machines{state="lost"}`], m[`fixpoint_machines{state="started"}`], m[`fixpoint_units{phase="lost"}`], m["fixpoint_converged"])
	}
	// The new leader's app data is what the units see now.
	r := fixpoint(t, time.Minute, "debug", "universe", "db/0", "--data-dir", data)
	if r.code != 0 || !strings.Contains(r.stdout, `"primary": "db/1"`) {
		t.Fatalf("db/0's universe does not carry the new leader's app data:\n%s\n%s", r.stdout, r.stderr)
	}
}

func TestCrashMidConvergenceReachesTheSameFixedPoint(t *testing.T) {
	t.Parallel()
	clean := t.TempDir()
	if r := fixpoint(t, 5*time.Minute, "up", "-f", repo("testdata", "demo", "env.cue"), "--data-dir", clean, "--until-converged", "--timeout", "4m"); r.code != 0 {
		t.Fatalf("clean run: %d\n%s", r.code, r.stderr)
	}
	data := t.TempDir()
	up := startProc(t, "up", "-f", repo("testdata", "demo", "env.cue"), "--data-dir", data)
	// Kill it as soon as some, but not all, hooks have run.
	rafttest.Eventually(t, 2*time.Minute, "some hooks ran", func() error {
		st := statusOf(t, data)
		if st == nil {
			return errors.New(up.out.String())
		}
		runs := 0
		for _, u := range st.Units {
			runs += u.Reconciles
		}
		return holds(runs > 0, jsonString(st))
	})
	up.kill()
	r := fixpoint(t, 5*time.Minute, "up", "-f", repo("testdata", "demo", "env.cue"), "--data-dir", data, "--until-converged", "--timeout", "4m")
	if r.code != 0 {
		t.Fatalf("restart after SIGKILL: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, unit := range []string{"web-0", "web-1"} {
		want, _ := os.ReadFile(filepath.Join(clean, "agent", "units", unit, "web.conf"))
		got, err := os.ReadFile(filepath.Join(data, "agent", "units", unit, "web.conf"))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s web.conf after the crash differs from a clean run:\n%s\nwant:\n%s", unit, got, want)
		}
	}
}
