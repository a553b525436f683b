package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/raftstore"
)

// cluster is three `fixpoint server` processes on loopback.
type cluster struct {
	t        *testing.T
	dirs     []string
	procs    []*proc
	addrs    []string
	token    string
	join     string
	tlsDir   string
	extra    []string // flags every server gets
	clientTL []string // flags every client command gets
	// agentDirs keeps each machine's agent data dir across restarts: it
	// holds the machine's credential.
	agentDirs map[string]string
	// owner, when set, owns the processes restart starts, so that a node
	// restarted in one subtest outlives it; t otherwise.
	owner *testing.T
	// tokenFile, when set, is the operator token in a file only its owner
	// may read: restarted nodes read it there instead of taking --token.
	tokenFile string
}

func (c *cluster) serverArgs(i int) []string {
	args := []string{"server", "--node-id", fmt.Sprintf("n%d", i+1), "--data-dir", c.dirs[i],
		"--raft-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--log-level", "warn"}
	if c.tlsDir != "" {
		name := fmt.Sprintf("n%d", i+1)
		args = append(args, "--tls-cert", filepath.Join(c.tlsDir, name+".pem"), "--tls-key", filepath.Join(c.tlsDir, name+"-key.pem"), "--tls-ca", filepath.Join(c.tlsDir, "ca.pem"))
	}
	return append(args, c.extra...)
}

func startCluster(t *testing.T, withTLS bool) *cluster {
	t.Helper()
	c := &cluster{t: t, extra: []string{"--agent-ttl", "2s"}}
	if withTLS {
		c.tlsDir = t.TempDir()
		if r := fixpoint(t, time.Minute, "tls", "init", "--dir", c.tlsDir); r.code != 0 {
			t.Fatalf("tls init: %s", r.stderr)
		}
		for _, name := range []string{"n1", "n2", "n3", "agent"} {
			role := "server"
			if name == "agent" {
				role = "agent"
			}
			if r := fixpoint(t, time.Minute, "tls", "cert", "--dir", c.tlsDir, "--role", role, "--name", name, "--host", "127.0.0.1,localhost"); r.code != 0 {
				t.Fatalf("tls cert %s: %s", name, r.stderr)
			}
		}
		c.clientTL = []string{"--tls-ca", filepath.Join(c.tlsDir, "ca.pem")}
	}
	for i := 0; i < 3; i++ {
		c.dirs = append(c.dirs, t.TempDir())
		c.procs = append(c.procs, nil)
		c.addrs = append(c.addrs, "")
	}
	c.procs[0] = startProc(t, append(c.serverArgs(0), "--bootstrap")...)
	c.addrs[0] = c.waitAddr(0)
	c.token = readFile(t, filepath.Join(c.dirs[0], operatorTokenFile))
	c.join = readFile(t, filepath.Join(c.dirs[0], joinTokenFile))
	for i := 1; i < 3; i++ {
		// --token-file: a token on the command line shows in ps.
		c.procs[i] = startProc(t, append(c.serverArgs(i), "--join", c.addrs[0], "--token-file", filepath.Join(c.dirs[0], operatorTokenFile))...)
		c.addrs[i] = c.waitAddr(i)
	}
	eventually(t, "three voters", time.Minute, func() (bool, string) {
		ms := c.members(-1)
		voters := 0
		for _, m := range ms {
			if m.Voter && m.Role != "unknown" {
				voters++
			}
		}
		return voters == 3, jsonString(ms)
	})
	return c
}

// waitAddr waits for server i to publish its API address.
func (c *cluster) waitAddr(i int) string {
	c.t.Helper()
	path := filepath.Join(c.dirs[i], endpointFile)
	_ = os.Remove(path)
	eventually(c.t, fmt.Sprintf("n%d serving", i+1), time.Minute, func() (bool, string) {
		_, err := os.Stat(path)
		return err == nil, c.procs[i].out.String()
	})
	return readEndpoint(c.t, c.dirs[i])
}

// live lists the addresses of the servers still running.
func (c *cluster) live() string {
	var out []string
	for i, p := range c.procs {
		if p.cmd.ProcessState == nil {
			out = append(out, c.addrs[i])
		}
	}
	return strings.Join(out, ",")
}

// cli runs a client command against the live servers.
func (c *cluster) cli(args ...string) run {
	c.t.Helper()
	return c.cliAt(c.live(), args...)
}

func (c *cluster) members(skip int) []raftstore.Member {
	c.t.Helper()
	r := c.cli("cluster", "members", "--format", "json")
	var ms []raftstore.Member
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &ms) != nil {
		return nil
	}
	return ms
}

func (c *cluster) status() *engine.Status {
	c.t.Helper()
	r := c.cli("status", "--format", "json")
	var st engine.Status
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil {
		return nil
	}
	return &st
}

func (c *cluster) leader() int {
	for _, m := range c.members(-1) {
		if m.Role == "leader" {
			for i := range c.addrs {
				if m.ID == fmt.Sprintf("n%d", i+1) {
					return i
				}
			}
		}
	}
	return -1
}

func (c *cluster) agent(machine string) *proc {
	c.t.Helper()
	if c.agentDirs == nil {
		c.agentDirs = map[string]string{}
	}
	if c.agentDirs[machine] == "" {
		c.agentDirs[machine] = c.t.TempDir()
	}
	args := []string{"agent", "--controller", strings.Join(c.addrs, ","), "--machine", machine, "--data-dir", c.agentDirs[machine], "--address", "127.0.0.1", "--token-file", filepath.Join(c.dirs[0], joinTokenFile), "--log-level", "warn"}
	if c.tlsDir != "" {
		args = append(args, "--tls-ca", filepath.Join(c.tlsDir, "ca.pem"))
	}
	return startProc(c.t, args...)
}

func TestClusterWithAgentsSurvivesAgentAndLeaderLoss(t *testing.T) {
	testClusterWithAgents(t, false)
}

func TestClusterWithAgentsOverTLS(t *testing.T) {
	testClusterWithAgents(t, true)
}

func testClusterWithAgents(t *testing.T, withTLS bool) {
	if testing.Short() {
		t.Skip("starts five processes; skipped in -short")
	}
	c := startCluster(t, withTLS)
	m1 := c.agent("m1")
	eventually(t, "m1 registered", time.Minute, func() (bool, string) {
		st := c.status()
		return st != nil && st.Machines["m1"] != nil, m1.out.String()
	})
	c.agent("m2")
	// Apply through a follower: writes reach the leader.
	if r := c.cli("apply", "-f", repo("testdata", "envs", "leader.cue"), "--yes", "--wait", "--timeout", "3m"); r.code != 0 {
		t.Fatalf("apply: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	st := c.status()
	if !st.Converged || st.Units["db/0"].Machine != "m1" || st.Units["db/1"].Machine != "m2" || !st.Units["db/0"].Leader {
		t.Fatalf("after apply: %s", jsonString(st))
	}
	// Kill m1's agent: its units go lost, db leadership moves to db/1,
	// the rest reconverges around it.
	_ = m1.cmd.Process.Signal(syscall.SIGKILL)
	_ = m1.cmd.Wait()
	eventually(t, "leadership moved off the lost machine", 2*time.Minute, func() (bool, string) {
		st := c.status()
		return st != nil && st.Converged && st.Units["db/0"].Agent == "lost" && st.Units["db/1"].Leader &&
			strings.HasPrefix(st.Units["db/1"].Status.Message, "primary"), jsonString(st)
	})
	// Kill the Raft leader meanwhile: a new one is elected, nothing
	// acknowledged is lost.
	li := c.leader()
	if li < 0 {
		t.Fatal("no Raft leader")
	}
	_ = c.procs[li].cmd.Process.Signal(syscall.SIGKILL)
	_ = c.procs[li].cmd.Wait()
	eventually(t, "a new Raft leader", time.Minute, func() (bool, string) {
		return c.leader() >= 0, jsonString(c.members(-1))
	})
	// The agent comes back with its data dir (its credential renews the
	// machine's registration) and catches up.
	c.agent("m1")
	eventually(t, "m1 back, environment converged", 2*time.Minute, func() (bool, string) {
		st := c.status()
		return st != nil && st.Converged && st.Units["db/0"].Agent == "" && st.Units["db/0"].Phase == engine.Settled &&
			len(st.Units) == 3 && st.Services["db"] != nil && st.Services["web"] != nil, jsonString(st)
	})
	// The killed server restarts from its data dir and catches up.
	c.procs[li] = startProc(t, append(c.serverArgs(li), "--join", c.live(), "--token", c.token)...)
	c.addrs[li] = c.waitAddr(li)
	c.waitCaughtUp(t, "the restarted node caught up")
	if r := c.cli("plan", "-f", repo("testdata", "envs", "leader.cue")); r.code != 0 {
		t.Fatalf("after all that the environment differs from what was applied: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A backup holds relation passwords: it is its owner's only, even
	// over a file that was world-readable.
	backup := filepath.Join(t.TempDir(), "backup.json")
	if err := os.WriteFile(backup, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := c.cli("cluster", "snapshot", "save", backup); r.code != 0 {
		t.Fatalf("snapshot save: %d\n%s", r.code, r.stderr)
	}
	if fi, err := os.Stat(backup); err != nil || fi.Mode().Perm() != 0o600 || fi.Size() == 0 {
		t.Errorf("backup: %v %v, want a non-empty file of mode 0600", fi, err)
	}
}

// waitCaughtUp waits until `cluster members` shows three nodes that answer,
// their applied indexes at most two entries apart.
func (c *cluster) waitCaughtUp(t *testing.T, what string) {
	t.Helper()
	eventually(t, what, time.Minute, func() (bool, string) {
		ms := c.members(-1)
		var max, min uint64 = 0, ^uint64(0)
		n := 0
		for _, m := range ms {
			if m.Role == "unknown" {
				continue
			}
			n++
			if m.AppliedIndex > max {
				max = m.AppliedIndex
			}
			if m.AppliedIndex < min {
				min = m.AppliedIndex
			}
		}
		return n == 3 && max-min <= 2, jsonString(ms)
	})
}
