package raftstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// TestCluster drives three in-process nodes over real TCP and HTTP through
// joins, forwarding, linearizable reads on followers, the loss of the
// leader, a restart, and a node that lost its data rejoining.
func TestCluster(t *testing.T) {
	log := testLogger(t)
	ctx := ctxT(t, 90*time.Second)
	nodes := make([]*node, 3)
	for i := range nodes {
		nodes[i] = newNode(t, log, fmt.Sprintf("n%d", i+1))
		// A short trailing log in small segments, so that a node that
		// lost its data catches up by snapshot install rather than by log
		// (the WAL drops compacted entries a whole segment at a time).
		nodes[i].trailing = 4
		nodes[i].segment = 1 << 10
	}
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]

	n1.start(true, nil)
	n2.start(false, []string{n1.httpAddr})
	n3.start(false, []string{n2.httpAddr}) // through a follower, which relays
	rafttest.Eventually(t, time.Minute, "three voters that know the leader", func() error {
		for _, n := range nodes {
			if n.s.LeaderHTTP() == "" {
				return fmt.Errorf("%s knows no leader", n.id)
			}
		}
		return voters(nodes, 3)
	})

	// acked holds every write acknowledged so far; none may ever be lost.
	acked := map[string]string{}
	apply := func(via *node, name string) {
		t.Helper()
		addr := "10.1.0." + name[1:]
		if _, err := via.s.Apply(ctx, machineCmd(name, addr)); err != nil {
			t.Fatalf("apply %s via %s: %v", name, via.id, err)
		}
		acked[name] = addr
	}
	checkAcked := func(n *node) {
		t.Helper()
		if err := n.s.Linearize(ctx); err != nil {
			t.Fatalf("linearize on %s: %v", n.id, err)
		}
		got := machines(n.s)
		for name, addr := range acked {
			if got[name] != addr {
				t.Fatalf("%s lost acknowledged write %s (has %v)", n.id, name, got)
			}
		}
	}

	leader := waitLeader(t, nodes...)
	followers := others(nodes, leader)

	// Writes through a follower are forwarded.
	if _, err := followers[0].s.Apply(ctx, deployCmd()); err != nil {
		t.Fatalf("deploy via follower %s: %v", followers[0].id, err)
	}
	apply(followers[1], "m1")
	rafttest.Eventually(t, time.Minute, "convergence", func() error { return converged(t, nodes...) })

	// A refusal keeps ErrRefused and its message across the forward.
	_, err := followers[0].s.Apply(ctx, &model.Command{Op: model.OpResolve, Resolve: &model.ResolveUnit{Unit: "nope/0"}})
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("forwarded refusal: got %v, want ErrRefused", err)
	}
	t.Logf("forwarded refusal: %v", err)

	// WaitIndex on a follower wakes on a write made at the leader.
	f := followers[0]
	woken := make(chan uint64, 1)
	after := f.s.Index()
	go func() {
		i, _, _ := f.s.WaitIndex(ctx, after)
		woken <- i
	}()
	apply(leader, "m2")
	if i := <-woken; i <= after {
		t.Fatalf("follower watcher woke at %d, want > %d", i, after)
	}

	// Linearizable reads on followers see writes acknowledged just before,
	// wherever they were made.
	for i := 3; i < 9; i++ {
		via := nodes[i%3]
		name := fmt.Sprintf("m%d", i)
		apply(via, name)
		for _, r := range followers {
			if err := r.s.Linearize(ctx); err != nil {
				t.Fatalf("linearize on %s: %v", r.id, err)
			}
			if _, ok := machines(r.s)[name]; !ok {
				t.Fatalf("%s: linearizable read after %s acknowledged %s does not see it", r.id, via.id, name)
			}
		}
	}

	rafttest.Eventually(t, time.Minute, "members", func() error {
		ms, err := followers[0].s.Members(ctx)
		if err != nil {
			return err
		}
		roles := map[string]int{}
		for _, m := range ms {
			roles[m.Role]++
			if !m.Voter || m.HTTPAddr == "" || m.AppliedIndex == 0 {
				return fmt.Errorf("member %+v: want a voter with an HTTP address and an index", m)
			}
		}
		if roles["leader"] != 1 || roles["follower"] != 2 {
			return fmt.Errorf("members %+v: want one leader, two followers", ms)
		}
		return nil
	})

	// Kill the leader: the others elect a new one, take writes, and keep
	// every acknowledged one.
	leader = waitLeader(t, nodes...)
	old := leader
	start := time.Now()
	old.stop()
	var next *node
	rafttest.Eventually(t, time.Minute, "a new leader", func() (err error) {
		next, err = leaderOf(others(nodes, old)...)
		return err
	})
	t.Logf("new leader %s after %s", next.id, time.Since(start).Round(time.Millisecond))
	apply(others(nodes, old, next)[0], "m10") // via the remaining follower
	apply(next, "m11")
	for _, n := range others(nodes, old) {
		checkAcked(n)
	}

	// Restart the old leader from its data dir (same Raft address, a new
	// HTTP port): it catches up, and the cluster learns its new address.
	old.httpAddr = ""
	old.start(false, nil)
	rafttest.Eventually(t, time.Minute, "restarted node catches up", func() error {
		if n, _ := next.s.fsm.node(old.id); n.HTTPAddr != old.httpAddr {
			return fmt.Errorf("registry has %s at %q, want %q", old.id, n.HTTPAddr, old.httpAddr)
		}
		return converged(t, nodes...)
	})
	checkAcked(old)
	apply(old, "m12") // forwarded from the restarted node

	// Wipe a follower's data dir; it rejoins under the same id on a new
	// Raft port, the leader updates its entry, and it catches up by
	// snapshot (every other node compacted its log) without a second
	// cluster appearing.
	next = waitLeader(t, nodes...)
	w := others(nodes, next)[0]
	apply(next, "m13")
	for _, n := range others(nodes, w) {
		if err := n.s.Snapshot(ctx); err != nil {
			t.Fatal(err)
		}
	}
	w.stop()
	if err := os.RemoveAll(w.dir); err != nil {
		t.Fatal(err)
	}
	w.raftAddr, w.httpAddr = "127.0.0.1:0", ""
	w.start(false, []string{others(nodes, w)[0].httpAddr, others(nodes, w)[1].httpAddr})
	rafttest.Eventually(t, time.Minute, "wiped node rejoins", func() error {
		if err := voters(nodes, 3); err != nil {
			return err
		}
		return converged(t, nodes...)
	})
	if w.s.fsm.restores.Load() == 0 {
		t.Errorf("wiped node caught up without a snapshot install")
	}
	waitLeader(t, nodes...)
	apply(w, "m14")
	for _, n := range nodes {
		checkAcked(n)
	}

	// A backup restored through a follower reaches every node, and a
	// follower's watcher is told to start over.
	var backup bytes.Buffer
	if err := w.s.SaveBackup(ctx, &backup); err != nil {
		t.Fatal(err)
	}
	apply(next, "m15")
	watcher := others(nodes, w)[0]
	rafttest.Eventually(t, time.Minute, "convergence before restore", func() error { return converged(t, nodes...) })
	before := watcher.s.Index()
	if err := w.s.RestoreBackup(ctx, &backup); err != nil {
		t.Fatal(err)
	}
	delete(acked, "m15")
	rafttest.Eventually(t, time.Minute, "restore reaches every node", func() error { return converged(t, nodes...) })
	if _, reset, _ := watcher.s.WaitIndex(ctx, before); !reset {
		t.Fatalf("%s: watcher from before the restore not reset", watcher.id)
	}
	for _, n := range nodes {
		if _, ok := machines(n.s)["m15"]; ok {
			t.Fatalf("%s still has m15 after restoring a backup made before it", n.id)
		}
	}
}

// TestRemove: a member removed through a follower leaves the configuration
// and the registry, and can not add itself back by announcing.
func TestRemove(t *testing.T) {
	log := testLogger(t)
	ctx := ctxT(t, 60*time.Second)
	nodes := []*node{newNode(t, log, "n1"), newNode(t, log, "n2"), newNode(t, log, "n3")}
	nodes[0].start(true, nil)
	nodes[1].start(false, []string{nodes[0].httpAddr})
	nodes[2].start(false, []string{nodes[0].httpAddr})
	rafttest.Eventually(t, time.Minute, "three voters", func() error { return voters(nodes, 3) })
	leader := waitLeader(t, nodes...)
	fs := others(nodes, leader)
	victim, via := fs[0], fs[1]
	if err := via.s.Remove(ctx, victim.id); err != nil {
		t.Fatal(err)
	}
	rest := others(nodes, victim)
	rafttest.Eventually(t, time.Minute, "two voters", func() error { return voters(rest, 2) })
	rafttest.Eventually(t, time.Minute, "registry forgets the removed node", func() error {
		for _, n := range rest {
			if _, ok := n.s.fsm.node(victim.id); ok {
				return fmt.Errorf("%s still has %s in its registry", n.id, victim.id)
			}
		}
		return nil
	})
	// Restarted on a new HTTP port, the removed node's announce is refused.
	victim.stop()
	victim.httpAddr = ""
	victim.start(false, nil)
	if err := victim.s.announce(); err != nil {
		t.Logf("announce after removal: %v", err)
	}
	if err := voters(rest, 2); err != nil {
		t.Fatal(err)
	}
	// Whatever its own log says, the leader refuses its rejoin.
	body, _ := json.Marshal(joinRequest{ID: victim.id, RaftAddr: victim.s.RaftAddr(), HTTPAddr: victim.httpAddr, Rejoin: true})
	rafttest.Eventually(t, time.Minute, "rejoin of a removed node refused", func() error {
		err := via.s.fwd.Call(ctx, "POST", via.httpAddr, "/v1/raft/join", body, nil) // relayed to the leader
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Status != http.StatusConflict || !errors.Is(err, fault.ErrConflict) {
			return fmt.Errorf("got %v, want 409", err)
		}
		t.Logf("rejoin refused: %v", err)
		return nil
	})
	if err := leader.s.Remove(ctx, "nobody"); err == nil {
		t.Fatal("removing an unknown node succeeded")
	}
	if _, err := leader.s.Apply(ctx, machineCmd("m1", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
}

// others returns the nodes that are not among skip.
func others(nodes []*node, skip ...*node) []*node {
	var out []*node
next:
	for _, n := range nodes {
		for _, s := range skip {
			if n == s {
				continue next
			}
		}
		out = append(out, n)
	}
	return out
}

// voters checks that every running node's configuration lists exactly the
// running nodes, want of them, as voters at their current Raft addresses.
func voters(nodes []*node, want int) error {
	for _, n := range nodes {
		if n.s == nil {
			continue
		}
		f := n.s.raft.GetConfiguration()
		if err := f.Error(); err != nil {
			return err
		}
		servers := f.Configuration().Servers
		if len(servers) != want {
			return fmt.Errorf("%s sees %d servers, want %d", n.id, len(servers), want)
		}
		for _, srv := range servers {
			var m *node
			for _, o := range nodes {
				if string(srv.ID) == o.id {
					m = o
				}
			}
			if m == nil || srv.Suffrage != raft.Voter || (m.s != nil && string(srv.Address) != m.s.RaftAddr()) {
				return fmt.Errorf("%s sees %s at %s (%v)", n.id, srv.ID, srv.Address, srv.Suffrage)
			}
		}
	}
	return nil
}

// TestNewAddresses: nodes restarted on other Raft and HTTP ports (as with
// port 0) are found again: a follower announces itself, a lone leader fixes
// its own entry.
func TestNewAddresses(t *testing.T) {
	log := testLogger(t)
	ctx := ctxT(t, 60*time.Second)
	nodes := []*node{newNode(t, log, "n1"), newNode(t, log, "n2"), newNode(t, log, "n3")}
	nodes[0].start(true, nil)
	nodes[1].start(false, []string{nodes[0].httpAddr})
	nodes[2].start(false, []string{nodes[1].httpAddr})
	rafttest.Eventually(t, time.Minute, "three voters", func() error { return voters(nodes, 3) })
	leader := waitLeader(t, nodes...)
	f := others(nodes, leader)[0]
	f.stop()
	oldRaft := f.raftAddr
	f.raftAddr, f.httpAddr = "127.0.0.1:0", ""
	f.start(false, nil)
	if f.raftAddr == oldRaft {
		t.Skip("the OS handed out the same port again")
	}
	rafttest.Eventually(t, time.Minute, "moved follower found again", func() error {
		if err := voters(nodes, 3); err != nil {
			return err
		}
		if f.s.LeaderHTTP() == "" {
			return errors.New("moved follower knows no leader")
		}
		return nil
	})
	if _, err := f.s.Apply(ctx, machineCmd("m1", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	rafttest.Eventually(t, time.Minute, "convergence", func() error { return converged(t, nodes...) })

	// A one-node cluster whose only node moved.
	solo := newNode(t, log, "solo")
	solo.start(true, nil)
	if _, err := solo.s.Apply(ctx, machineCmd("m1", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	solo.stop()
	solo.raftAddr, solo.httpAddr = "127.0.0.1:0", ""
	solo.start(false, nil)
	rafttest.Eventually(t, time.Minute, "lone leader fixes its address", func() error {
		if n, _ := solo.s.fsm.node(solo.id); n.HTTPAddr != solo.httpAddr {
			return fmt.Errorf("registry has %q, want %q", n.HTTPAddr, solo.httpAddr)
		}
		return voters([]*node{solo}, 1)
	})
}

// TestNoLeader: a node that can not reach a leader says so, names the
// nodes it knows of, and answers 503 over HTTP.
func TestNoLeader(t *testing.T) {
	log := testLogger(t)
	n1, n2 := newNode(t, log, "n1"), newNode(t, log, "n2")
	n1.start(true, nil)
	n2.start(false, []string{n1.httpAddr})
	rafttest.Eventually(t, time.Minute, "two voters", func() error { return voters([]*node{n1, n2}, 2) })
	n1.stop() // n2 alone is no quorum

	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	_, err := n2.s.Apply(ctx, machineCmd("m1", "10.0.0.1"))
	if !errors.Is(err, ErrNoLeader) || !strings.Contains(err.Error(), "n1") {
		t.Fatalf("apply without quorum: got %v, want ErrNoLeader naming n1", err)
	}
	t.Logf("apply without quorum: %v", err)

	ctx, cancel = context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := n2.s.Linearize(ctx); !errors.Is(err, ErrNoLeader) {
		t.Fatalf("linearize without quorum: got %v, want ErrNoLeader", err)
	}

	resp, err := http.Get("http://" + n2.httpAddr + "/v1/raft/readindex")
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(fmt.Sprint(body["error"]), "not the leader") {
		t.Fatalf("readindex on a lone follower: %d %v, want 503 saying it is not the leader", resp.StatusCode, body)
	}

	// Open refuses to start a node that neither bootstraps nor joins, and
	// a join that finds nobody names where it looked.
	if _, err := Open(context.Background(), Config{NodeID: "x", DataDir: t.TempDir(), RaftAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:1"}); err == nil {
		t.Fatal("Open without bootstrap, join or state succeeded")
	}
	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = Open(ctx, Config{NodeID: "x", DataDir: t.TempDir(), RaftAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:1", Join: []string{"127.0.0.1:1"}, Logger: log})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("join through nobody: got %v, want an error naming 127.0.0.1:1", err)
	}
	t.Logf("join through nobody: %v", err)
}
