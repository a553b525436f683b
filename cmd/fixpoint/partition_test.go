//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// TestPartitionMinorityRefusesMajorityGoesOn is issue 3's partition test.
// Three `fixpoint server` processes run in three network namespaces with
// their own addresses (10.77.0.1-3), each wired by a veth pair to a bridge
// that lives in a fourth namespace of its own; the host's network is never
// touched. Pulling the leader's port off the bridge cuts it off: the
// leader's side refuses writes saying it has no leader, the other two elect
// a leader and take writes, and once the port is back all three agree.
func TestPartitionMinorityRefusesMajorityGoesOn(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("needs network namespaces and three servers; skipped in -short")
	}
	tn := newTestNet(t, 3)
	// Three servers, one per namespace, on fixed ports: the namespaces
	// are private, nothing else listens there. The harness reaches each
	// from inside its own namespace, so that a cut-off node is still
	// reachable from "its side".
	c := newCluster(t)
	c.in = func(i int) []string { return []string{"ip", "netns", "exec", tn.ns[i]} }
	c.listen = func(i int) (string, string) { return tn.ips[i] + ":7000", tn.ips[i] + ":7070" }
	c.hc = tn.httpClient()
	c.start(3, false)
	all := []int{0, 1, 2}

	// leaderAmong waits until the given servers, each asked on its own,
	// agree on one of them as leader, in one term, and returns it.
	leaderAmong := func(what string, among ...int) int {
		t.Helper()
		l := -1
		rafttest.Eventually(t, time.Minute, what, func() error {
			l = -1
			var sts []raftStatus
			for _, i := range among {
				var st raftStatus
				if _, err := c.get(c.addrs[i], "/v1/raft/status", &st); err != nil {
					return err
				}
				sts = append(sts, st)
				if st.Role == "leader" {
					if l >= 0 {
						return errors.New("two leaders: " + jsonString(sts))
					}
					l = i
				}
			}
			for _, st := range sts {
				if l < 0 || st.Leader != nodeID(l) || st.Term != sts[0].Term {
					return errors.New(jsonString(sts))
				}
			}
			return nil
		})
		return l
	}

	envDir := t.TempDir()
	v1 := writeDemoEnv(t, envDir, "v1.cue", 2, 200)
	v2 := writeDemoEnv(t, envDir, "v2.cue", 3, 300)
	if r := c.cliIn(leaderAmong("one leader", all...), "apply", "-f", v1, "--yes"); r.code != 0 {
		t.Fatalf("apply v1: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// Cut the leader off.
	li := leaderAmong("one leader before the cut", all...)
	var majority []int
	for _, i := range all {
		if i != li {
			majority = append(majority, i)
		}
	}
	tn.cut(li)
	t.Logf("cut off leader %s", nodeID(li))

	// The majority elects one of its own and takes writes.
	t.Logf("majority elected %s", nodeID(leaderAmong("a new leader in the majority", majority...)))
	r := c.cliIn(majority[0], "apply", "-f", v2, "--yes")
	if r.code != 0 {
		t.Fatalf("apply v2 on the majority side: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	v2At := appliedIndex(t, r.stdout)

	// The minority refuses writes, saying it has no leader: an operator
	// command, and a raw write at the Raft layer.
	began := time.Now()
	r = c.cliIn(li, "resolved", "db/0")
	if r.code == 0 || !strings.Contains(r.stderr, "no leader") {
		t.Fatalf("a write through the cut-off node: exit %d, want a failure saying it has no leader:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("write through the minority refused after %s: %s", time.Since(began).Round(100*time.Millisecond), strings.TrimSpace(r.stderr))
	cmd, _ := json.Marshal(model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "partitioned", Address: "10.9.9.9"}})
	resp, body, err := c.do(http.MethodPost, c.addrs[li], "/v1/raft/apply", cmd)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "no leader") {
		t.Fatalf("raw write through the cut-off node: %v %s, want 503 saying it has no leader", err, body)
	}
	if r := c.cliIn(li, "apply", "-f", v1, "--yes"); r.code == 0 || !strings.Contains(r.stderr, "no leader") {
		t.Fatalf("apply through the cut-off node: exit %d, want a failure saying it has no leader:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// Its own copy never saw the majority's write.
	if stale := c.state(c.addrs[li], true); stale.EnvIndex >= v2At {
		t.Fatalf("the cut-off node's copy has env_index %d, at or past the majority's write at %d", stale.EnvIndex, v2At)
	}

	// Heal: all three agree on one leader and one state, which holds the
	// majority's write and not the minority's.
	tn.heal(li)
	t.Logf("healed %s", nodeID(li))
	final := leaderAmong("one leader after healing", all...)
	c.waitAgree("all three hold the same state", 3)
	st := c.state(c.addrs[final], true)
	if st.EnvIndex != v2At || st.Services["web"].Units != 3 || st.Machines["partitioned"] != nil {
		t.Fatalf("after healing: env_index %d (want %d), web units %d (want 3), machines %v (want no \"partitioned\")",
			st.EnvIndex, v2At, st.Services["web"].Units, st.Machines)
	}
	if again := leaderAmong("the same leader", all...); again != final {
		t.Fatalf("leadership moved from %s to %s after healing", nodeID(final), nodeID(again))
	}
	// The healed node takes writes again.
	if r := c.cliIn(li, "apply", "-f", v1, "--yes"); r.code != 0 {
		t.Fatalf("apply through the healed node: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("after healing %s leads; all three at env_index %d, then the healed node took a write", nodeID(final), st.EnvIndex)
}

// testNet is a private network for one test: namespaces ns[i] holding eth0
// with ips[i], each wired to a bridge in namespace br by a veth pair whose
// bridge end is port[i].
type testNet struct {
	t    *testing.T
	br   string
	ns   []string
	ips  []string
	port []string
}

// newTestNet builds the network, or skips the test where namespaces can
// not be made. Everything is deleted at cleanup, failures included; what a
// run that died left behind is deleted by the next.
func newTestNet(t *testing.T, n int) *testNet {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("partition test skipped: network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("partition test skipped: no `ip` command (install iproute2)")
	}
	sweepNetns(t)
	// Named after this process, so that a later run can tell leftovers of
	// a run that died (a test timeout runs no cleanups) from namespaces of
	// a run going on now.
	id := fmt.Sprintf("fp%dx%d", os.Getpid(), netSeq.Add(1))
	tn := &testNet{t: t, br: id + "-br"}
	if out, err := exec.Command("ip", "netns", "add", tn.br).CombinedOutput(); err != nil {
		t.Skipf("partition test skipped: `ip netns add` does not work here: %v: %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(tn.destroy)
	tn.must("ip", "-n", tn.br, "link", "set", "lo", "up")
	tn.must("ip", "-n", tn.br, "link", "add", "br0", "type", "bridge")
	tn.must("ip", "-n", tn.br, "link", "set", "br0", "up")
	for i := 0; i < n; i++ {
		ns, ip, port := fmt.Sprintf("%s-n%d", id, i+1), fmt.Sprintf("10.77.0.%d", i+1), fmt.Sprintf("p%d", i+1)
		tn.must("ip", "netns", "add", ns)
		tn.ns, tn.ips, tn.port = append(tn.ns, ns), append(tn.ips, ip), append(tn.port, port)
		tn.must("ip", "-n", ns, "link", "set", "lo", "up")
		// Made in the bridge's namespace, one end moved into the node's.
		tn.must("ip", "-n", tn.br, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns)
		tn.must("ip", "-n", tn.br, "link", "set", port, "master", "br0")
		tn.must("ip", "-n", tn.br, "link", "set", port, "up")
		tn.must("ip", "-n", ns, "addr", "add", ip+"/24", "dev", "eth0")
		tn.must("ip", "-n", ns, "link", "set", "eth0", "up")
	}
	// Every node reaches every other before anything starts.
	for i := range tn.ns {
		for j := range tn.ips {
			if i != j {
				tn.waitReach(i, tn.ips[j])
			}
		}
	}
	return tn
}

// netSeq numbers the networks of this process.
var netSeq atomic.Int64

// netnsName is how newTestNet names its namespaces.
var netnsName = regexp.MustCompile(`^fp(\d+)x\d+-(br|n\d+)$`)

// sweepNetns deletes namespaces left by runs of this test whose process is
// gone. Namespaces of live processes, and any not named by newTestNet, are
// left alone.
func sweepNetns(t *testing.T) {
	entries, err := os.ReadDir("/var/run/netns")
	if err != nil {
		return
	}
	for _, e := range entries {
		m := netnsName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil || pid == os.Getpid() || unix.Kill(pid, 0) != unix.ESRCH {
			continue
		}
		if out, err := exec.Command("ip", "netns", "del", e.Name()).CombinedOutput(); err != nil {
			t.Logf("leftover netns %s: %v: %s", e.Name(), err, bytes.TrimSpace(out))
		} else {
			t.Logf("deleted netns %s, left by a run that died", e.Name())
		}
	}
}

func (tn *testNet) must(args ...string) {
	tn.t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		tn.t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
}

// waitReach waits until namespace i can open a TCP connection to ip (port
// 9: nothing listens, a refusal proves the route).
func (tn *testNet) waitReach(i int, ip string) {
	tn.t.Helper()
	rafttest.Eventually(tn.t, 30*time.Second, fmt.Sprintf("%s reaches %s", tn.ns[i], ip), func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c, err := dialInNetns(ctx, tn.ns[i], "tcp", ip+":9")
		if err == nil {
			c.Close()
			return nil
		}
		return holds(strings.Contains(err.Error(), "connection refused"), err.Error())
	})
}

// cut takes node i's port off the bridge: its packets go nowhere.
func (tn *testNet) cut(i int) { tn.must("ip", "-n", tn.br, "link", "set", tn.port[i], "down") }

// heal puts it back.
func (tn *testNet) heal(i int) { tn.must("ip", "-n", tn.br, "link", "set", tn.port[i], "up") }

// destroy deletes every namespace (their links go with them). Processes
// in them are killed first by their own cleanups, registered later.
func (tn *testNet) destroy() {
	for _, ns := range append(tn.ns, tn.br) {
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			tn.t.Errorf("delete netns %s: %v: %s", ns, err, bytes.TrimSpace(out))
		}
	}
}

// nsOf is the namespace that holds ip.
func (tn *testNet) nsOf(ip string) string {
	for i, x := range tn.ips {
		if x == ip {
			return tn.ns[i]
		}
	}
	return ""
}

// dialInNetns opens a connection from inside a named network namespace: a
// socket belongs to the namespace of the thread that made it, so the
// dialing goroutine locks its thread, enters the namespace, dials, and
// goes back. Should going back fail, it stays locked and the thread ends
// with the goroutine, namespace and all.
func dialInNetns(ctx context.Context, ns, network, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		home, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, err}
			return
		}
		defer home.Close()
		f, err := os.Open(filepath.Join("/var/run/netns", ns))
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, fmt.Errorf("enter netns %s: %w", ns, err)}
			return
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if unix.Setns(int(home.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

// httpClient talks HTTP to the servers, each reached from inside its own
// namespace.
func (tn *testNet) httpClient() *http.Client {
	tr := &http.Transport{
		DisableKeepAlives: true, // no connection outlives a cut
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			ns := tn.nsOf(host)
			if ns == "" {
				return nil, fmt.Errorf("%s is not on the test network", host)
			}
			return dialInNetns(ctx, ns, network, addr)
		},
	}
	return &http.Client{Transport: tr, Timeout: time.Minute}
}
