package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/bench/release"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// previousRelease is the release a cluster upgrades from one process at a
// time (docs/operating.md, "Upgrading").
const previousRelease = release.Previous

// TestRollingUpgradeFromPreviousRelease runs "Upgrading" in
// docs/operating.md: three servers and an agent of the previous release
// hold the demo environment; each server is replaced by this build in
// turn, followers first, one of them rolled back and forward again on
// the way, while a writer keeps writing. After every step the
// environment is at its fixed point; raising the cluster's level is
// refused, naming the servers still to upgrade, until the last one runs
// this build, and accepted after; the agent of the previous release
// keeps running its units against the upgraded servers, and is replaced
// last. Nothing acknowledged is lost and every server ends with the same
// state.
func TestRollingUpgradeFromPreviousRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the previous release and starts four processes; skipped in -short")
	}
	t.Parallel()
	old := buildRelease(t, previousRelease)
	c := newCluster(t)
	// Each server keeps its addresses across its restarts, as on real
	// machines: the agent knows them from its flags.
	addrs := freeAddrs(t, 6)
	c.listen = func(i int) (string, string) { return addrs[2*i], addrs[2*i+1] }
	for i := range 3 {
		c.bins[nodeID(i)] = old
	}
	c.bins["m1"] = old
	c.start(3, false)
	c.agent("m1")
	c.waitMachines("m1")
	if r := c.cli("apply", "-f", demoEnv, "--yes", "--wait", "--timeout", "3m"); r.code != 0 {
		t.Fatalf("apply the demo on %s: %d\n%s\n%s", previousRelease, r.code, r.stdout, r.stderr)
	}
	w := startWriter(c)
	defer w.stop()

	upgraded := map[int]bool{}
	// replace restarts server i on bin, on its data dir, and waits until
	// it caught up and the environment is at its fixed point.
	replace := func(i int, bin, what string) {
		t.Helper()
		c.procs[i].stop(t)
		c.bins[nodeID(i)] = bin
		c.restart(i)
		w.setAddrs(c.addrs)
		c.waitCaughtUp(what + ": caught up")
		clusterConverged(t, c, what)
		t.Logf("%s: %d writes acknowledged so far", what, w.count())
	}
	// The gated command: refused through an upgraded server, naming the
	// servers still on the previous release, until none is.
	refused := func(via int) {
		t.Helper()
		r := c.cliAt(c.addrs[via], "cluster", "upgrade")
		var names []string
		for i := range 3 {
			if !upgraded[i] {
				names = append(names, nodeID(i))
			}
		}
		want := fmt.Sprintf("this command needs %d: upgrade %s first", model.BuildLevel, strings.Join(names, ", "))
		if r.code == 0 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "runs feature level 1") {
			t.Fatalf("cluster upgrade with %v on %s: exit %d, want a refusal saying %q:\n%s%s", names, previousRelease, r.code, want, r.stdout, r.stderr)
		}
	}

	// Followers first, the leader last.
	for step := range 3 {
		l := c.waitLeader("a leader", -1)
		i := l
		for j := range 3 {
			if !upgraded[j] && j != l {
				i = j
				break
			}
		}
		replace(i, fixpointBin(t), fmt.Sprintf("step %d: %s on this build", step+1, nodeID(i)))
		upgraded[i] = true
		if step == 0 {
			// While the cluster's level has not moved, a server goes
			// back to the previous release and forward again.
			replace(i, old, nodeID(i)+" rolled back")
			upgraded[i] = false
			replace(i, fixpointBin(t), nodeID(i)+" on this build again")
			upgraded[i] = true
		}
		if step < 2 {
			refused(i)
			var cl model.ClusterLevel
			if _, err := c.get(c.addrs[i], "/v1/raft/level", &cl); err != nil || !cl.Mixed || cl.Level != model.LevelBase {
				t.Fatalf("after step %d the cluster level is %s (%v), want a mixed cluster at level 1", step+1, jsonString(cl), err)
			}
			// What the operator reads: the builds, and the warning. The
			// leader of the previous release answers status without
			// them; the upgraded server's own copy has them, and so
			// does cluster members through it.
			r := c.cliAt(c.addrs[i], "status", "--stale")
			if r.code != 0 || !strings.Contains(r.stdout, "control plane at feature level 1: ") || !strings.Contains(r.stdout, "(level 1)") ||
				!strings.Contains(r.stdout, "warning: mixed cluster: ") {
				t.Fatalf("status after step %d: %d\n%s%s", step+1, r.code, r.stdout, r.stderr)
			}
			r = c.cliAt(c.addrs[i], "cluster", "members")
			if r.code != 0 || !strings.Contains(r.stdout, "warning: mixed cluster: ") {
				t.Fatalf("cluster members after step %d: %d\n%s%s", step+1, r.code, r.stdout, r.stderr)
			}
			if m := metricValues(t, c.addrs[i]); m["fixpoint_cluster_mixed"] != 1 || m[`fixpoint_cluster_servers{level="1"}`] != float64(3-len(upgradedIDs(upgraded))) {
				t.Fatalf("metrics after step %d: mixed %v, servers at level 1 %v", step+1, m["fixpoint_cluster_mixed"], m[`fixpoint_cluster_servers{level="1"}`])
			}
		}
	}

	// Every server runs this build: the level rises.
	r := c.cli("cluster", "upgrade")
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("cluster at feature level %d", model.BuildLevel)) {
		t.Fatalf("cluster upgrade after the last server: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The server cluster members asks may be a follower that has not
	// applied the level's entry yet.
	rafttest.Eventually(t, time.Minute, "cluster members at the new level", func() error {
		r := c.cli("cluster", "members")
		return holds(r.code == 0 && strings.Contains(r.stdout, "VERSION") && strings.Contains(r.stdout, fmt.Sprintf("control plane at feature level %d: ", model.BuildLevel)),
			fmt.Sprintf("%d\n%s%s", r.code, r.stdout, r.stderr))
	})
	rafttest.Eventually(t, time.Minute, "every server at the new level, in status", func() error {
		st := c.status()
		if st == nil || st.Cluster == nil || st.Cluster.Level != model.BuildLevel || st.Cluster.Mixed || len(st.Cluster.Warnings) != 0 {
			return fmt.Errorf("status cluster %s", jsonString(st))
		}
		m := metricValues(t, c.addrs[0])
		if m["fixpoint_cluster_mixed"] != 0 || m[fmt.Sprintf(`fixpoint_cluster_servers{level="%d"}`, model.BuildLevel)] != 3 || m["fixpoint_cluster_feature_level"] != float64(model.BuildLevel) {
			return fmt.Errorf("metrics: mixed %v, level %v", m["fixpoint_cluster_mixed"], m["fixpoint_cluster_feature_level"])
		}
		return nil
	})

	// The agent of the previous release runs its units against this
	// build's servers: a changed config reaches a fixed point.
	before := c.status()
	if r := c.cli("apply", "-f", demoWith(t, "max_connections: 300"), "--yes", "--wait", "--timeout", "3m"); r.code != 0 {
		t.Fatalf("apply a config change with the agent on %s: %d\n%s\n%s", previousRelease, r.code, r.stdout, r.stderr)
	}
	after := c.status()
	if after.Units["db/0"].Reconciles <= before.Units["db/0"].Reconciles {
		t.Fatalf("db/0 ran no hook for the config change: reconciles %d then %d", before.Units["db/0"].Reconciles, after.Units["db/0"].Reconciles)
	}
	// Agents last: the same data dir, this build; units whose universe
	// did not change run nothing.
	c.agents["m1"].stop(t)
	delete(c.bins, "m1")
	c.agent("m1")
	clusterConverged(t, c, "the agent on this build")
	if r := c.cli("plan", "-f", demoWith(t, "max_connections: 300")); r.code != 0 {
		t.Fatalf("after the upgrade the environment differs from what was applied: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	final := c.status()
	for u, us := range final.Units {
		if us.Reconciles != after.Units[u].Reconciles {
			t.Errorf("%s ran again after its agent's upgrade: reconciles %d, was %d", u, us.Reconciles, after.Units[u].Reconciles)
		}
	}

	acked := w.stop()
	if len(acked) == 0 {
		t.Fatal("the writer had no write acknowledged")
	}
	c.waitAgree("every server holds the same state", 3)
	st := c.state(c.addrs[0], true)
	lost := 0
	for _, name := range acked {
		if st.Machines[name] == nil {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged writes lost", lost, len(acked))
	}
	t.Logf("rolling upgrade from %s: %d writes acknowledged, none lost; %d refused or unanswered while servers restarted", previousRelease, len(acked), w.failed())
}

// upgradedIDs lists the servers upgraded so far.
func upgradedIDs(upgraded map[int]bool) []string {
	var out []string
	for i, ok := range upgraded {
		if ok {
			out = append(out, nodeID(i))
		}
	}
	return out
}

// buildRelease builds cmd/fixpoint of rev from this repository's history;
// it skips the test when the history does not hold rev (a shallow clone).
func buildRelease(t *testing.T, rev string) string {
	t.Helper()
	bin, err := release.Build(context.Background(), repo(), rev, t.TempDir(), "./cmd/fixpoint")
	if errors.Is(err, release.ErrNoHistory) {
		t.Skipf("the upgrade from %s is not tested: %v", rev, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(bin, "fixpoint")
}

// freeAddrs picks n free ports on 127.0.0.1, for servers that keep their
// addresses across restarts. They are below the kernel's ephemeral range
// when it can be read: a port the OS hands out for a connection or a :0
// listener elsewhere in the run is never one of them, so a server
// restarted on its address finds it free.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	low := 0
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			low, _ = strconv.Atoi(f[0])
		}
	}
	var out []string
	var lns []net.Listener
	for tries := 0; len(out) < n; tries++ {
		port := 0
		if low > 11000 && tries < 1000 {
			port = 10000 + rand.IntN(low-11000)
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			if port != 0 {
				continue
			}
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().String())
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}

// demoWith is the demo environment with its db's max_connections line
// replaced by line, in a file of its own that names the demo's charms.
func demoWith(t *testing.T, line string) string {
	t.Helper()
	src := readFile(t, demoEnv)
	out := strings.Replace(src, "max_connections: 200", line, 1)
	out = strings.ReplaceAll(out, `"../charms/`, `"`+repo("testdata", "charms")+`/`)
	if out == src {
		t.Fatal("the demo environment changed: no max_connections line to replace")
	}
	path := filepath.Join(t.TempDir(), "env.cue")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// clusterConverged waits until the environment is at its fixed point.
func clusterConverged(t *testing.T, c *cluster, what string) {
	t.Helper()
	rafttest.Eventually(t, 3*time.Minute, what+": fixed point", func() error {
		st := c.status()
		if st == nil || !st.Converged {
			return fmt.Errorf("status %s", jsonString(st))
		}
		return nil
	})
}

// writer registers machines w0, w1, ... through the servers in turn, one
// write at a time, and keeps the names of those acknowledged.
type writer struct {
	c     *cluster
	mu    sync.Mutex
	addrs []string
	acked []string
	fails int
	quit  chan struct{}
	done  chan struct{}
	once  sync.Once
}

func startWriter(c *cluster) *writer {
	w := &writer{c: c, quit: make(chan struct{}), done: make(chan struct{})}
	w.setAddrs(c.addrs)
	go w.run()
	return w
}

// setAddrs gives the writer the servers' addresses after a restart.
func (w *writer) setAddrs(addrs []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.addrs = append([]string(nil), addrs...)
}

func (w *writer) run() {
	defer close(w.done)
	for n := 0; ; n++ {
		select {
		case <-w.quit:
			return
		default:
		}
		w.mu.Lock()
		addr := w.addrs[n%len(w.addrs)]
		w.mu.Unlock()
		name := fmt.Sprintf("w%d", n)
		body, _ := json.Marshal(model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: name, Address: "10.7.0.1"}})
		resp, _, err := w.c.do(http.MethodPost, addr, "/v1/raft/apply", body)
		w.mu.Lock()
		if err == nil && resp.StatusCode == http.StatusOK {
			w.acked = append(w.acked, name)
		} else {
			w.fails++
		}
		w.mu.Unlock()
		if err != nil || resp.StatusCode != http.StatusOK {
			// A server restarting: try the next one after a pause.
			select {
			case <-w.quit:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

func (w *writer) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

func (w *writer) failed() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fails
}

// stop ends the writer and returns the names it had acknowledged.
func (w *writer) stop() []string {
	w.once.Do(func() { close(w.quit) })
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.acked...)
}
