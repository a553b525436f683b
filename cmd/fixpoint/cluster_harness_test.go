package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// cluster is `fixpoint server` processes on 127.0.0.1 with OS-picked
// ports, and the agents started against them, set up as README's "A
// three-node control plane with agents" says. Its processes belong to
// root, the test that started it, and outlive root's subtests.
type cluster struct {
	root *testing.T
	// t is the test the helpers report to now (see enter).
	t *testing.T

	// Each node's data dir, process and API address.
	dirs  []string
	procs []*proc
	addrs []string
	// flags is what every server gets besides its own.
	flags []string
	// The operator token, and it and the join token in files only their
	// owner may read, as README installs them.
	token, tokenFile, joinFile string
	// tlsDir holds the CA and the nodes' certificates with withTLS;
	// clientTL is what a client command then gets (--tls-ca), hc the
	// harness's own HTTP client.
	tlsDir   string
	clientTL []string
	hc       *http.Client
	// in, when set, is what node i and the client commands aimed at it
	// run behind (`ip netns exec NS`), and listen where node i listens
	// (its Raft and API addresses); by default nodes run here on
	// 127.0.0.1 with OS-picked ports.
	in     func(i int) []string
	listen func(i int) (raft, http string)

	// Each machine's agent, and its data dir, kept across restarts: it
	// holds the machine's credential.
	agents    map[string]*proc
	agentDirs map[string]string
	// bins, when set, is the binary each server and each machine's
	// agent runs, by node id or machine name; the others run this
	// build's (fixpointBin).
	bins map[string]string
	// agentLog is the agents' --log-level; "" means warn.
	agentLog string
}

// binOf is the binary server or machine who runs.
func (c *cluster) binOf(who string) string {
	if b := c.bins[who]; b != "" {
		return b
	}
	return fixpointBin(c.t)
}

// startCluster starts n servers on 127.0.0.1, each with flags, the first
// bootstrapping and the others joining it with the operator token, and
// waits until all are voters. withTLS gives the API TLS with a CA of the
// test's own; without it the API is plain HTTP and Raft runs over mutual
// TLS with the bootstrap node's own CA.
func startCluster(t *testing.T, n int, withTLS bool, flags ...string) *cluster {
	t.Helper()
	return newCluster(t, flags...).start(n, withTLS)
}

// newCluster is a cluster not started yet, for a test to say where its
// nodes run (in, listen, hc) before start.
func newCluster(t *testing.T, flags ...string) *cluster {
	return &cluster{root: t, t: t, flags: flags, agents: map[string]*proc{}, agentDirs: map[string]string{}, bins: map[string]string{}}
}

// start starts n servers as startCluster says.
func (c *cluster) start(n int, withTLS bool) *cluster {
	t := c.t
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			c.dump()
		}
	})
	if withTLS {
		// fixpoint tls init --dir tls
		// fixpoint tls cert --dir tls --role server --name n1 --host 10.0.0.1   # n2, n3 alike
		// A test may have set tlsDir to a CA it keeps (a restored cluster's).
		if c.tlsDir == "" {
			c.tlsDir = filepath.Join(t.TempDir(), "tls")
			if r := fixpoint(t, time.Minute, "tls", "init", "--dir", c.tlsDir); r.code != 0 {
				t.Fatalf("tls init: %s", r.stderr)
			}
		}
		for i := range n {
			if r := fixpoint(t, time.Minute, "tls", "cert", "--dir", c.tlsDir, "--role", "server", "--name", nodeID(i), "--host", "127.0.0.1,localhost", "--force"); r.code != 0 {
				t.Fatalf("tls cert %s: %s", nodeID(i), r.stderr)
			}
		}
		c.clientTL = []string{"--tls-ca", filepath.Join(c.tlsDir, "ca.pem")}
	}
	if c.hc == nil {
		hc, err := (&tlsFlags{ca: c.ca()}).httpClient()
		if err != nil {
			t.Fatal(err)
		}
		c.hc = hc
	}
	if c.hc == nil {
		c.hc = &http.Client{}
	}
	// A test may have prepared the first data dirs (a staged restore).
	for len(c.dirs) < n {
		c.dirs = append(c.dirs, t.TempDir())
	}
	c.procs = make([]*proc, n)
	c.addrs = make([]string, n)
	// fixpoint server --node-id n1 --data-dir ... --bootstrap $TLS
	c.startNode(0, "--bootstrap")
	if withTLS && !strings.HasPrefix(c.addrs[0], "https://") {
		t.Fatalf("n1 serves its API at %s with --tls-*, want https://", c.addrs[0])
	}
	// install -m 600 /dev/null /etc/fixpoint/operator.token   # then paste the token into it
	// install -m 600 /dev/null /etc/fixpoint/join.token       # the join token, on each machine
	etc := t.TempDir()
	c.token = readFile(t, filepath.Join(c.dirs[0], operatorTokenFile))
	c.tokenFile = installPrivate(t, filepath.Join(etc, "operator.token"), c.token)
	c.joinFile = installPrivate(t, filepath.Join(etc, "join.token"), readFile(t, filepath.Join(c.dirs[0], joinTokenFile)))
	// fixpoint server --node-id n2 ... --join https://10.0.0.1:7070 \
	//     --token-file /etc/fixpoint/operator.token $TLS
	for i := 1; i < n; i++ {
		c.startNode(i, "--join", c.addrs[0], "--token-file", c.tokenFile)
	}
	c.waitVoters(n)
	return c
}

// nodeID is the node id of server i.
func nodeID(i int) string { return fmt.Sprintf("n%d", i+1) }

// ca is the CA file clients trust, "" without TLS.
func (c *cluster) ca() string {
	if c.tlsDir == "" {
		return ""
	}
	return filepath.Join(c.tlsDir, "ca.pem")
}

// installPrivate writes token to path, readable by its owner only.
func installPrivate(t *testing.T, path, token string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// enter makes t the test the helpers report to.
func (c *cluster) enter(t *testing.T) { c.t = t }

// startNode starts server i on its data dir with extra flags and waits
// until it publishes its API address. A killed node leaves its address
// behind: it is removed first.
func (c *cluster) startNode(i int, extra ...string) {
	c.t.Helper()
	raftAddr, httpAddr := "127.0.0.1:0", "127.0.0.1:0"
	if c.listen != nil {
		raftAddr, httpAddr = c.listen(i)
	}
	args := []string{"server", "--node-id", nodeID(i), "--data-dir", c.dirs[i],
		"--raft-addr", raftAddr, "--http-addr", httpAddr, "--log-level", "warn"}
	if c.tlsDir != "" {
		args = append(args, "--tls-cert", filepath.Join(c.tlsDir, nodeID(i)+".pem"), "--tls-key", filepath.Join(c.tlsDir, nodeID(i)+"-key.pem"), "--tls-ca", c.ca())
	}
	path := filepath.Join(c.dirs[i], endpointFile)
	_ = os.Remove(path)
	c.procs[i] = start(c.t, c.root, nil, append(c.argv(i, append(args, c.flags...)...), extra...)...)
	waitFile(c.t, c.procs[i], nodeID(i)+" serving", path)
	c.addrs[i] = readEndpoint(c.t, c.dirs[i])
}

// restart starts server i again on its data dir with extra flags, by
// default joining through the live nodes with the operator token.
func (c *cluster) restart(i int, extra ...string) {
	c.t.Helper()
	if extra == nil {
		extra = []string{"--join", c.live()}
	}
	c.startNode(i, append(extra, "--token-file", c.tokenFile)...)
}

// sigkill kills server i the hard way and reaps it.
func (c *cluster) sigkill(i int) {
	c.procs[i].kill()
}

// live lists the addresses of the servers still running.
func (c *cluster) live() string {
	var out []string
	for i, p := range c.procs {
		if !p.exited() {
			out = append(out, c.addrs[i])
		}
	}
	return strings.Join(out, ",")
}

// cli runs a client command the way an operator does: FIXPOINT_ADDR
// naming every server (dead ones too: the client finds the live ones),
// FIXPOINT_TOKEN, and the CA.
func (c *cluster) cli(args ...string) run {
	c.t.Helper()
	env := []string{"FIXPOINT_ADDR=" + strings.Join(c.addrs, ","), "FIXPOINT_TOKEN=" + c.token}
	return runFixpoint(c.t, 5*time.Minute, "", env, append(args, c.clientTL...)...)
}

// argv is the command line of the binary with args, behind node i's in.
func (c *cluster) argv(i int, args ...string) []string {
	var argv []string
	if c.in != nil {
		argv = c.in(i)
	}
	return append(append(argv, c.binOf(nodeID(i))), args...)
}

// cliIn runs a client command where node i runs, against node i only.
func (c *cluster) cliIn(i int, args ...string) run {
	c.t.Helper()
	args = append(append(args, "--controller", c.addrs[i]), c.clientTL...)
	return runArgv(c.t, 5*time.Minute, "", []string{"FIXPOINT_TOKEN=" + c.token}, c.argv(i, args...)...)
}

// cliAt runs a client command against the given addresses only.
func (c *cluster) cliAt(addrs string, args ...string) run {
	c.t.Helper()
	return runFixpoint(c.t, 5*time.Minute, "", []string{"FIXPOINT_TOKEN=" + c.token}, append(append(args, "--controller", addrs), c.clientTL...)...)
}

// api is an API client for every server, with the operator token.
func (c *cluster) api() *api.Client {
	return api.NewClient(c.addrs, c.token, c.hc)
}

// status reads the status from whichever server answers; nil when none.
func (c *cluster) status() *engine.Status {
	return statusFrom(c.api())
}

// members is the Raft configuration as whichever server answers sees it;
// nil when none.
func (c *cluster) members() []raftstore.Member {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ms []raftstore.Member
	if c.api().Do(ctx, http.MethodGet, "/v1/raft/members", nil, &ms) != nil {
		return nil
	}
	return ms
}

// leader is the index of the server that leads, -1 when none does.
func (c *cluster) leader() int {
	for _, m := range c.members() {
		if m.Role == "leader" {
			for i := range c.addrs {
				if m.ID == nodeID(i) {
					return i
				}
			}
		}
	}
	return -1
}

// waitVoters waits until n voters answer.
func (c *cluster) waitVoters(n int) {
	c.t.Helper()
	rafttest.Eventually(c.t, time.Minute, fmt.Sprintf("%d voters", n), func() error {
		ms := c.members()
		voters := 0
		for _, m := range ms {
			if m.Voter && m.Role != "unknown" {
				voters++
			}
		}
		if voters != n {
			return fmt.Errorf("%d voters: %s", voters, jsonString(ms))
		}
		return nil
	})
}

// waitLeader waits until one server other than not leads, and returns it.
func (c *cluster) waitLeader(what string, not int) int {
	c.t.Helper()
	l := -1
	rafttest.Eventually(c.t, time.Minute, what, func() error {
		if l = c.leader(); l < 0 || l == not {
			return fmt.Errorf("leader n%d: %s", l+1, jsonString(c.members()))
		}
		return nil
	})
	return l
}

// waitCaughtUp waits until every server answers, their applied indexes at
// most two entries apart.
func (c *cluster) waitCaughtUp(what string) {
	c.t.Helper()
	rafttest.Eventually(c.t, time.Minute, what, func() error {
		ms := c.members()
		var most, least uint64 = 0, ^uint64(0)
		n := 0
		for _, m := range ms {
			if m.Role == "unknown" {
				continue
			}
			n++
			most, least = max(most, m.AppliedIndex), min(least, m.AppliedIndex)
		}
		if n != len(c.procs) || most-least > 2 {
			return fmt.Errorf("%d answer: %s", n, jsonString(ms))
		}
		return nil
	})
}

// agent starts machine's agent on its own data dir against controllers
// (every server by default), as README's
//
//	fixpoint agent --controller https://10.0.0.1:7070,... --machine m1 \
//	    --data-dir /var/lib/fixpoint-agent --token-file /etc/fixpoint/join.token \
//	    --tls-ca tls/ca.pem
func (c *cluster) agent(machine string, controllers ...string) *proc {
	c.t.Helper()
	if controllers == nil {
		controllers = c.addrs
	}
	if c.agentDirs[machine] == "" {
		c.agentDirs[machine] = c.root.TempDir()
	}
	args := []string{c.binOf(machine), "agent", "--controller", strings.Join(controllers, ","), "--machine", machine,
		"--data-dir", c.agentDirs[machine], "--address", "127.0.0.1", "--token-file", c.joinFile, "--log-level", cmp.Or(c.agentLog, "warn")}
	c.agents[machine] = start(c.t, c.root, nil, append(args, c.clientTL...)...)
	return c.agents[machine]
}

// waitMachines waits until status lists the machines, registered.
func (c *cluster) waitMachines(machines ...string) {
	c.t.Helper()
	rafttest.Eventually(c.t, time.Minute, strings.Join(machines, ", ")+" registered", func() error {
		st := c.status()
		if st == nil {
			return fmt.Errorf("no status")
		}
		for _, m := range machines {
			if st.Machines[m] == nil {
				return fmt.Errorf("machines %s", jsonString(st.Machines))
			}
		}
		return nil
	})
}

// do sends one request to one node with the operator token and returns
// the answer.
func (c *cluster) do(method, addr, path string, body []byte) (*http.Response, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(addr, "/")+path, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// get sends GET path to one node and decodes the JSON answer into out; it
// returns the index header.
func (c *cluster) get(addr, path string, out any) (string, error) {
	resp, body, err := c.do(http.MethodGet, addr, path, nil)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s%s: %s: %s", addr, path, resp.Status, bytes.TrimSpace(body))
	}
	return resp.Header.Get("X-Fixpoint-Index"), json.Unmarshal(body, out)
}

// state reads the whole state from the first of addrs (comma-separated)
// that answers: linearizable, or this node's own copy when stale.
func (c *cluster) state(addrs string, stale bool) *model.State {
	c.t.Helper()
	path := "/v1/state"
	if stale {
		path += "?stale"
	}
	var errs []string
	for _, addr := range strings.Split(addrs, ",") {
		st := model.NewState()
		if _, err := c.get(addr, path, st); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		st.Normalize()
		return st
	}
	c.t.Fatalf("read the state: %s", strings.Join(errs, "; "))
	return nil
}

// raftStatus is what GET /v1/raft/status says about one node.
type raftStatus struct {
	ID           string `json:"id"`
	Role         string `json:"role"`
	Leader       string `json:"leader"`
	Term         uint64 `json:"term"`
	AppliedIndex uint64 `json:"applied_index"`
}

// waitAgree waits until want nodes run and, each asked on its own, agree:
// exactly one says it leads, all name it as leader in the same term, each
// has every server as a voter in its configuration, and all hold
// byte-identical states at the same index.
func (c *cluster) waitAgree(what string, want int) {
	c.t.Helper()
	rafttest.Eventually(c.t, 2*time.Minute, what, func() error {
		var sts []raftStatus
		var states []string
		for i, addr := range c.addrs {
			if c.procs[i].exited() {
				continue
			}
			var st raftStatus
			if _, err := c.get(addr, "/v1/raft/status", &st); err != nil {
				return err
			}
			sts = append(sts, st)
			var ms []struct {
				ID    string `json:"id"`
				Voter bool   `json:"voter"`
			}
			if _, err := c.get(addr, "/v1/raft/members", &ms); err != nil {
				return err
			}
			voters := 0
			for _, m := range ms {
				if m.Voter {
					voters++
				}
			}
			if voters != len(c.procs) {
				return fmt.Errorf("n%d sees members %s", i+1, jsonString(ms))
			}
			var raw json.RawMessage
			idx, err := c.get(addr, "/v1/state?stale", &raw)
			if err != nil {
				return err
			}
			states = append(states, idx+" "+string(raw))
		}
		if len(sts) != want {
			return fmt.Errorf("%d nodes answer, want %d", len(sts), want)
		}
		leaders := 0
		for _, st := range sts {
			if st.Role == "leader" {
				leaders++
			}
			if st.Leader == "" || st.Leader != sts[0].Leader || st.Term != sts[0].Term {
				return fmt.Errorf("nodes disagree on the leader: %s", jsonString(sts))
			}
		}
		if leaders != 1 {
			return fmt.Errorf("%d nodes say they lead: %s", leaders, jsonString(sts))
		}
		for i := range states {
			if states[i] != states[0] {
				return fmt.Errorf("states differ: %s", jsonString(sts))
			}
		}
		return nil
	})
}

// dump logs the end of every process's output to root.
func (c *cluster) dump() {
	for i, p := range c.procs {
		if p != nil {
			c.root.Logf("n%d:\n%s", i+1, tail(p.out.String()))
		}
	}
	machines := make([]string, 0, len(c.agents))
	for m := range c.agents {
		machines = append(machines, m)
	}
	sort.Strings(machines)
	for _, m := range machines {
		c.root.Logf("agent %s:\n%s", m, tail(c.agents[m].out.String()))
	}
}

// tail is the end of a process's output, without the tokens the bootstrap
// node prints once: those stay out of test logs.
func tail(s string) string {
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
