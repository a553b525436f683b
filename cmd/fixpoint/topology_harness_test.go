package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
)

// fixedPointBound is how long after an apply (or a restart) every
// topology reaches the fixed point, as the client sees it: generous on a
// loaded two-core machine, short of a 30 s stall.
const fixedPointBound = 15 * time.Second

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

	// The servers, nil on up; the operator and join tokens in files only
	// their owner may read, as README installs them; each machine's agent
	// and its data dir.
	c         *cluster
	joinFile  string
	agents    map[string]*proc
	agentDirs map[string]string
}

func newTopology(t *testing.T, name string) *topology {
	tp := &topology{name: name, root: t, t: t, envDir: t.TempDir()}
	t.Cleanup(func() {
		t.Logf("%s: time to the fixed point\n  %s", name, strings.Join(tp.times, "\n  "))
		if t.Failed() {
			tp.dump()
		}
	})
	return tp
}

// enter makes t the scenario the helpers report to.
func (tp *topology) enter(t *testing.T) {
	tp.t = t
	if tp.c != nil {
		tp.c.t = t
	}
}

// dump logs the end of every process's output.
func (tp *topology) dump() {
	tail := func(s string) string {
		// The bootstrap node prints the tokens once: not into test logs.
		var lines []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(l, "operator token:") && !strings.HasPrefix(l, "join token:") {
				lines = append(lines, l)
			}
		}
		s = strings.Join(lines, "\n")
		if len(s) > 4000 {
			return "..." + s[len(s)-4000:]
		}
		return s
	}
	if tp.up != nil {
		tp.root.Logf("up:\n%s", tail(tp.up.out.String()))
	}
	if tp.c != nil {
		for i, p := range tp.c.procs {
			tp.root.Logf("n%d:\n%s", i+1, tail(p.out.String()))
		}
	}
	for _, m := range sortedKeys(tp.agents) {
		tp.root.Logf("agent %s:\n%s", m, tail(tp.agents[m].out.String()))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// cli runs a client command the way an operator of this topology does:
// against up's data dir, or with FIXPOINT_ADDR naming every server (dead
// ones too: the client finds the live ones), FIXPOINT_TOKEN, and the CA.
func (tp *topology) cli(args ...string) run {
	tp.t.Helper()
	if tp.c == nil {
		return runFixpoint(tp.t, 3*time.Minute, "", nil, append(args, "--data-dir", tp.upData)...)
	}
	env := []string{"FIXPOINT_ADDR=" + strings.Join(tp.c.addrs, ","), "FIXPOINT_TOKEN=" + tp.c.token}
	return runFixpoint(tp.t, 3*time.Minute, "", env, append(args, tp.c.clientTL...)...)
}

// status reads status -o json; nil while no control plane answers.
func (tp *topology) status() *engine.Status {
	tp.t.Helper()
	r := tp.cli("status", "-o", "json")
	var st engine.Status
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil {
		return nil
	}
	return &st
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
	if st == nil || st.Units[unit] == nil || tp.agentDirs[st.Units[unit].Machine] == "" {
		tp.t.Fatalf("no agent runs %s: %s", unit, jsonString(st))
	}
	return filepath.Join(tp.agentDirs[st.Units[unit].Machine], "units", dir)
}

// startUpTopology prepares the embedded topology: deploy starts `up`.
func startUpTopology(t *testing.T) *topology {
	tp := newTopology(t, "up")
	tp.upData = t.TempDir()
	return tp
}

// startUp starts `up -f env` in the background, as the demo's README
// section does, with its API on an OS-picked port.
func (tp *topology) startUp(env string) {
	tp.t.Helper()
	// A killed up leaves its address behind: nobody may find it.
	_ = os.Remove(filepath.Join(tp.upData, endpointFile))
	tp.up = startProcFor(tp.t, tp.root, "up", "-f", env, "--data-dir", tp.upData, "--http", "127.0.0.1:0")
	eventually(tp.t, "up serving", time.Minute, func() (bool, string) {
		_, err := os.Stat(filepath.Join(tp.upData, endpointFile))
		return err == nil && tp.up.cmd.ProcessState == nil, tp.up.out.String()
	})
}

// startServers starts three `fixpoint server` processes and two agents,
// m1 and m2, the way README's "A three-node control plane with agents"
// says, word for word but for the addresses (127.0.0.1 with OS-picked
// ports) and, without withTLS, the $TLS flags: that plain topology serves
// its API over HTTP and runs Raft over mutual TLS with the bootstrap
// node's own CA.
func startServers(t *testing.T, name string, withTLS bool) *topology {
	t.Helper()
	tp := newTopology(t, name)
	c := &cluster{t: t, owner: t}
	tp.c = c
	etc := t.TempDir() // README's /etc/fixpoint
	if withTLS {
		// fixpoint tls init --dir tls
		// fixpoint tls cert --dir tls --role server --name n1 --host 10.0.0.1   # n2, n3 alike
		c.tlsDir = filepath.Join(t.TempDir(), "tls")
		if r := fixpoint(t, time.Minute, "tls", "init", "--dir", c.tlsDir); r.code != 0 {
			t.Fatalf("tls init: %s", r.stderr)
		}
		for i := 1; i <= 3; i++ {
			name := fmt.Sprintf("n%d", i)
			if r := fixpoint(t, time.Minute, "tls", "cert", "--dir", c.tlsDir, "--role", "server", "--name", name, "--host", "127.0.0.1"); r.code != 0 {
				t.Fatalf("tls cert %s: %s", name, r.stderr)
			}
		}
		// fixpoint apply -f env.cue --wait --tls-ca tls/ca.pem
		c.clientTL = []string{"--tls-ca", filepath.Join(c.tlsDir, "ca.pem")}
	}
	for i := 0; i < 3; i++ {
		c.dirs = append(c.dirs, t.TempDir())
		c.procs = append(c.procs, nil)
		c.addrs = append(c.addrs, "")
	}
	// fixpoint server --node-id n1 --data-dir ... --bootstrap $TLS
	c.procs[0] = startProc(t, append(c.serverArgs(0), "--bootstrap")...)
	c.addrs[0] = c.waitAddr(0)
	if withTLS && !strings.HasPrefix(c.addrs[0], "https://") {
		t.Fatalf("n1 serves its API at %s with --tls-*, want https://", c.addrs[0])
	}
	// install -m 600 /dev/null /etc/fixpoint/operator.token   # then paste the token into it
	// install -m 600 /dev/null /etc/fixpoint/join.token       # the join token, on each machine
	c.token = readFile(t, filepath.Join(c.dirs[0], operatorTokenFile))
	c.tokenFile = installPrivate(t, filepath.Join(etc, "operator.token"), c.token)
	tp.joinFile = installPrivate(t, filepath.Join(etc, "join.token"), readFile(t, filepath.Join(c.dirs[0], joinTokenFile)))
	// fixpoint server --node-id n2 ... --join https://10.0.0.1:7070 \
	//     --token-file /etc/fixpoint/operator.token $TLS
	for i := 1; i < 3; i++ {
		c.procs[i] = startProc(t, append(c.serverArgs(i), "--join", c.addrs[0], "--token-file", c.tokenFile)...)
		c.addrs[i] = c.waitAddr(i)
	}
	// fixpoint cluster members --tls-ca tls/ca.pem
	eventually(t, "three voters", time.Minute, func() (bool, string) {
		r := tp.cli("cluster", "members", "-o", "json")
		var ms []struct {
			Role  string `json:"role"`
			Voter bool   `json:"voter"`
		}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &ms) != nil {
			return false, r.stdout + r.stderr
		}
		voters := 0
		for _, m := range ms {
			if m.Voter && m.Role != "unknown" {
				voters++
			}
		}
		return voters == 3, r.stdout
	})
	tp.agents = map[string]*proc{}
	tp.agentDirs = map[string]string{}
	for _, m := range []string{"m1", "m2", "m3"} {
		tp.agentDirs[m] = t.TempDir()
	}
	for _, m := range []string{"m1", "m2"} {
		tp.startAgent(m, c.addrs)
	}
	tp.waitMachines("m1", "m2")
	return tp
}

// installPrivate writes token to path, readable by its owner only.
func installPrivate(t *testing.T, path, token string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startAgent starts machine's agent on its own data dir, as README's
//
//	fixpoint agent --controller https://10.0.0.1:7070,... --machine m1 \
//	    --data-dir /var/lib/fixpoint-agent --token-file /etc/fixpoint/join.token \
//	    --tls-ca tls/ca.pem
func (tp *topology) startAgent(machine string, controllers []string) {
	tp.t.Helper()
	args := []string{"agent", "--controller", strings.Join(controllers, ","), "--machine", machine,
		"--data-dir", tp.agentDirs[machine], "--token-file", tp.joinFile, "--log-level", "warn"}
	tp.agents[machine] = startProcFor(tp.t, tp.root, append(args, tp.c.clientTL...)...)
}

// killAgent kills machine's agent the hard way and reaps it.
func (tp *topology) killAgent(machine string) {
	tp.t.Helper()
	p := tp.agents[machine]
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		tp.t.Fatalf("kill agent %s: %v", machine, err)
	}
	_ = p.cmd.Wait()
}

// waitMachines waits until status lists the machines, registered.
func (tp *topology) waitMachines(machines ...string) {
	tp.t.Helper()
	eventually(tp.t, strings.Join(machines, ", ")+" registered", time.Minute, func() (bool, string) {
		st := tp.status()
		if st == nil {
			return false, "no status"
		}
		for _, m := range machines {
			if st.Machines[m] == nil {
				return false, jsonString(st.Machines)
			}
		}
		return true, ""
	})
}
