package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
)

// fixedPointBound is how long after an apply (or a restart) every
// topology reaches the fixed point, as the client sees it: generous on a
// loaded two-core machine, short of a 30 s stall.
const fixedPointBound = 25 * time.Second

// waitTimeout is what the suite's `apply --wait` and `wait` are given: the
// outcome is still judged when the bound is missed, and a stuck topology
// still ends.
const waitTimeout = "90s"

// topology is one way of running fixpoint that the topology suite drives
// alike: the embedded `up`, or three `fixpoint server` processes with
// agents on their own data dirs. Its processes belong to root, the test
// that started it, and outlive the scenarios' subtests.
type topology struct {
	name string
	root *testing.T
	// t is the scenario running now: helpers fail it, not root.
	t *testing.T
	// envDir holds the environments the scenarios write.
	envDir string
	// times is how long each timed step took, for the summary; late are
	// those past fixedPointBound.
	times, late []string

	// up: its process and data dir.
	up     *proc
	upData string

	// The servers and their agents, nil on up.
	c *cluster
}

func newTopology(t *testing.T, name string) *topology {
	tp := &topology{name: name, root: t, t: t, envDir: t.TempDir()}
	t.Cleanup(func() {
		t.Logf("%s: time to the fixed point\n  %s", name, strings.Join(tp.times, "\n  "))
		if t.Failed() && tp.up != nil {
			t.Logf("up:\n%s", tail(tp.up.out.String()))
		}
	})
	return tp
}

// enter makes t the scenario the helpers report to.
func (tp *topology) enter(t *testing.T) {
	tp.t = t
	if tp.c != nil {
		tp.c.enter(t)
	}
}

// cli runs a client command the way an operator of this topology does:
// against up's data dir, or with FIXPOINT_ADDR naming every server (dead
// ones too: the client finds the live ones), FIXPOINT_TOKEN, and the CA.
func (tp *topology) cli(args ...string) run {
	tp.t.Helper()
	if tp.c == nil {
		return runFixpoint(tp.t, 3*time.Minute, "", nil, append(args, "--data-dir", tp.upData)...)
	}
	return tp.c.cli(args...)
}

// status reads the status; nil while no control plane answers.
func (tp *topology) status() *engine.Status {
	if tp.c == nil {
		return statusOf(tp.t, tp.upData)
	}
	return tp.c.status()
}

// bound records how long a step took to reach the fixed point and fails
// the scenario when that is past fixedPointBound.
func (tp *topology) bound(what string, took time.Duration) {
	tp.t.Helper()
	took = took.Round(time.Millisecond)
	step := tp.t.Name()[len(tp.root.Name())+1:] + ": " + what
	tp.times = append(tp.times, fmt.Sprintf("%-40s %s", step, took))
	if took > fixedPointBound {
		tp.late = append(tp.late, fmt.Sprintf("%s %s", step, took))
		tp.t.Errorf("%s: %s took %s, past the %s bound: convergence stalls on this topology", tp.name, what, took, fixedPointBound)
	}
}

// apply makes env the running environment with `apply --wait`, wants its
// exit code, and bounds the time the client waited.
func (tp *topology) apply(env string, want int) run {
	tp.t.Helper()
	// plan packs the charms into the client's cache: the clock measures
	// convergence, not go build.
	if r := tp.cli("plan", "-f", env); r.code != 0 && r.code != exitChanges {
		tp.t.Fatalf("plan %s: %d\n%s%s", filepath.Base(env), r.code, r.stdout, r.stderr)
	}
	start := time.Now()
	r := tp.cli("apply", "-f", env, "--yes", "--wait", "--timeout", waitTimeout)
	tp.bound("apply --wait", time.Since(start))
	if r.code != want {
		tp.t.Fatalf("apply -f %s --wait exited %d, want %d\n%s%s", filepath.Base(env), r.code, want, r.stdout, r.stderr)
	}
	return r
}

// waitFrom runs `wait` and bounds the time from start to its end.
func (tp *topology) waitFrom(start time.Time, what string) {
	tp.t.Helper()
	r := tp.cli("wait", "--timeout", waitTimeout)
	tp.bound(what, time.Since(start))
	if r.code != 0 {
		tp.t.Fatalf("wait exited %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// unitDir is where the agent running unit keeps its files.
func (tp *topology) unitDir(unit string) string {
	tp.t.Helper()
	dir := strings.ReplaceAll(unit, "/", "-")
	if tp.c == nil {
		return filepath.Join(tp.upData, "agent", "units", dir)
	}
	st := tp.status()
	if st == nil || st.Units[unit] == nil || tp.c.agentDirs[st.Units[unit].Machine] == "" {
		tp.t.Fatalf("no agent runs %s: %s", unit, jsonString(st))
	}
	return filepath.Join(tp.c.agentDirs[st.Units[unit].Machine], "units", dir)
}

// startUpTopology prepares the embedded topology: deploy starts `up`.
func startUpTopology(t *testing.T) *topology {
	tp := newTopology(t, "up")
	tp.upData = t.TempDir()
	return tp
}

// startUp starts `up -f env` in the background, as the demo's README
// section does, with its API on an OS-picked port, and waits until it
// serves.
func (tp *topology) startUp(env string) {
	tp.t.Helper()
	path := filepath.Join(tp.upData, endpointFile)
	// A killed up leaves its address behind: nobody may find it.
	_ = os.Remove(path)
	tp.up = start(tp.t, tp.root, nil, fixpointBin(tp.t), "up", "-f", env, "--data-dir", tp.upData, "--http", "127.0.0.1:0")
	waitFile(tp.t, tp.up, "up serving", path)
}

// startServers starts three `fixpoint server` processes and two agents,
// m1 and m2, the way README's "A three-node control plane with agents"
// says, word for word but for the addresses (127.0.0.1 with OS-picked
// ports) and, without withTLS, the $TLS flags.
func startServers(t *testing.T, name string, withTLS bool) *topology {
	t.Helper()
	tp := newTopology(t, name)
	tp.c = startCluster(t, 3, withTLS)
	tp.c.agent("m1")
	tp.c.agent("m2")
	tp.c.waitMachines("m1", "m2")
	return tp
}
