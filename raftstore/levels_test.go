package raftstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// TestLevelGate runs a rolling upgrade in process: n1 on a build of the
// base level, n2 and n3 one level up. Raising the cluster's level is
// refused, before anything is proposed, naming n1, until n1 restarts on
// the new build; then it is accepted, every node records it, and a
// server of the old level can no longer join.
func TestLevelGate(t *testing.T) {
	log := testLogger(t)
	ctx := ctxT(t, 2*time.Minute)
	n1, n2, n3 := newNode(t, log, "n1"), newNode(t, log, "n2"), newNode(t, log, "n3")
	n1.level = model.LevelBase
	n1.start(true, nil)
	settled(t, n1)
	n2.start(false, []string{n1.httpAddr})
	n3.start(false, []string{n1.httpAddr})
	nodes := []*node{n1, n2, n3}
	rafttest.Eventually(t, time.Minute, "three voters", func() error { return voters(nodes, 3) })
	if _, err := n2.s.Apply(ctx, machineCmd("m1", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}

	// Mixed: status says so, and the raise is refused through any node.
	rafttest.Eventually(t, time.Minute, "a mixed cluster seen from n3", func() error {
		c := n3.s.ClusterLevel()
		if !c.Mixed || c.Level != model.LevelBase || len(c.Warnings) == 0 || !strings.Contains(c.Warnings[0], "n1 (level 1) still run an older build") {
			return fmt.Errorf("cluster level %+v", c)
		}
		return nil
	})
	before := waitLeader(t, nodes...).s.LastIndex()
	want := "node n1 runs feature level 1, this command needs 2: upgrade n1 first"
	for _, via := range nodes {
		if _, err := via.s.Upgrade(ctx); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("upgrade via %s: %v, want %q", via.id, err, want)
		}
	}
	status, body := postJSON(t, "http://"+n3.httpAddr+"/v1/raft/upgrade", "{}")
	if status != http.StatusConflict || !strings.Contains(body, want) || !strings.Contains(body, `"kind":"conflict"`) {
		t.Fatalf("POST /v1/raft/upgrade: %d %s", status, body)
	}
	// A command that needs a level nobody runs names every server.
	l := waitLeader(t, nodes...)
	err := l.s.gate(ctx, 3)
	var le *levelError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "node n1 runs feature level 1, node n2 runs feature level 2, node n3 runs feature level 2, this command needs 3: upgrade n1, n2, n3 first") {
		t.Fatalf("gate(3): %v", err)
	}
	if got := l.s.LastIndex(); got != before {
		t.Fatalf("refused raises reached the log: last index %d, was %d", got, before)
	}
	if err := l.s.gate(ctx, model.LevelBase); err != nil {
		t.Fatalf("gate of the base level: %v", err)
	}

	// Upgrade n1: same data dir, the new build.
	n1.stop()
	n1.level = model.BuildLevel
	n1.start(false, nil)
	rafttest.Eventually(t, time.Minute, "n1 back", func() error { return voters(nodes, 3) })
	rafttest.Eventually(t, time.Minute, "every server on the new build, seen from n2", func() error {
		c := n2.s.ClusterLevel()
		if c.Mixed || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "run fixpoint cluster upgrade") {
			return fmt.Errorf("cluster level %+v", c)
		}
		return nil
	})
	// Every server runs it, but the level waits for the operator: a
	// command that needs it says so.
	l = waitLeader(t, nodes...)
	if err := l.s.gate(ctx, model.BuildLevel); err == nil || !strings.Contains(err.Error(), "the cluster's level is 1: run fixpoint cluster upgrade first") {
		t.Fatalf("gate before the raise: %v", err)
	}
	lvl, err := n3.s.Upgrade(ctx)
	if err != nil || lvl != model.BuildLevel {
		t.Fatalf("upgrade after n1's: level %d, %v", lvl, err)
	}
	if lvl, err := n1.s.Upgrade(ctx); err != nil || lvl != model.BuildLevel {
		t.Fatalf("a second upgrade: level %d, %v", lvl, err)
	}
	rafttest.Eventually(t, time.Minute, "every node at the new level, states equal", func() error {
		for _, n := range nodes {
			if got := n.s.fsm.clusterLevel(); got != model.BuildLevel {
				return fmt.Errorf("%s records level %d", n.id, got)
			}
		}
		return converged(t, nodes...)
	})
	if c := n1.s.ClusterLevel(); c.Mixed || len(c.Warnings) != 0 {
		t.Fatalf("after the upgrade: %+v", c)
	}

	// The level survives a snapshot and a restart.
	if err := n2.s.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	n2.stop()
	n2.start(false, nil)
	rafttest.Eventually(t, time.Minute, "n2 back at the new level", func() error {
		if got := n2.s.fsm.clusterLevel(); got != model.BuildLevel {
			return fmt.Errorf("n2 records level %d", got)
		}
		return converged(t, nodes...)
	})

	// A server of the old build may not join any more.
	n4 := newNode(t, log, "n4")
	n4.level = model.LevelBase
	_, err = Open(ctxT(t, 20*time.Second), Config{NodeID: "n4", DataDir: n4.dir, RaftAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:1", Join: []string{n2.httpAddr}, Logger: log, level: model.LevelBase})
	if err == nil || !strings.Contains(err.Error(), "node n4 runs feature level 1, below the cluster's level 2") {
		t.Fatalf("join of an old build: %v", err)
	}
}

// TestHaltAtEntryOfNewerLevel writes entries a newer build would write
// into a node's log: the node stops applying at the first one and never
// skips it, across restarts; it serves no read and says why in its
// status, and it refuses to snapshot past what it applied.
func TestHaltAtEntryOfNewerLevel(t *testing.T) {
	cases := []struct {
		name, reason string
		entry        func(t *testing.T) []byte
	}{
		{"leveled entry", "the entry needs feature level 3 and this build has level 2", func(t *testing.T) []byte {
			data, err := encodeEntry(entryCommand, machineCmd("m2", "10.0.0.2"))
			if err != nil {
				t.Fatal(err)
			}
			return leveled(model.BuildLevel+1, data)
		}},
		{"unknown tag", "entry type 99 is unknown to this build", func(t *testing.T) []byte { return []byte{99, '{', '}'} }},
		{"unknown op", `is unknown to this build (feature level 2)`, func(t *testing.T) []byte {
			data, err := json.Marshal(model.Command{Op: "rename-world"})
			if err != nil {
				t.Fatal(err)
			}
			return append([]byte{entryCommand}, data...)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			log := testLogger(t)
			ctx := ctxT(t, time.Minute)
			n := newNode(t, log, "n1")
			n.start(true, nil)
			settled(t, n)
			if _, err := n.s.Apply(ctx, machineCmd("m1", "10.0.0.1")); err != nil {
				t.Fatal(err)
			}
			n.stop()
			at := appendRaw(t, n.dir, tc.entry(t))
			// An entry after it, which must wait behind it.
			appendEntry(t, n.dir, machineCmd("m3", "10.0.0.3"))
			for restart := 0; restart < 2; restart++ {
				n.start(false, nil)
				rafttest.Eventually(t, time.Minute, "the node halted", func() error {
					if n.s.Halted() == nil {
						return fmt.Errorf("applied through %d", n.s.Index())
					}
					return nil
				})
				h := n.s.Halted()
				if !strings.Contains(h.Error(), fmt.Sprintf("node n1 stopped applying the log at entry %d: ", at)) || !strings.Contains(h.Error(), tc.reason) {
					t.Fatalf("halt: %v", h)
				}
				if got := n.s.Index(); got >= at {
					t.Fatalf("applied index %d, at or past the entry %d it cannot apply", got, at)
				}
				if err := n.s.View(func(*model.State) error { return nil }); !errors.Is(err, h) {
					t.Fatalf("a read of the halted node: %v", err)
				}
				if err := n.s.Linearize(ctxT(t, 5*time.Second)); err == nil {
					t.Fatal("a linearizable read of the halted node succeeded")
				}
				if err := n.s.Snapshot(ctx); err == nil || !strings.Contains(err.Error(), "stopped applying") {
					t.Fatalf("snapshot of the halted node: %v", err)
				}
				status, body := getJSON(t, "http://"+n.httpAddr+"/v1/raft/status")
				if status != http.StatusOK || !strings.Contains(body, tc.reason) {
					t.Fatalf("status: %d %s", status, body)
				}
				if c := n.s.ClusterLevel(); len(c.Warnings) == 0 || !strings.Contains(c.Warnings[0], "n1 stopped applying the log") {
					t.Fatalf("cluster level: %+v", c)
				}
				n.stop()
			}
		})
	}
}

// postJSON posts body and returns the answer's status and body.
func postJSON(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// getJSON gets url and returns the answer's status and body.
func getJSON(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRestoreSnapshotOfNewerLevelHalts: a snapshot of a cluster whose
// level this build lacks is not loaded; the FSM halts at its index.
func TestRestoreSnapshotOfNewerLevelHalts(t *testing.T) {
	f := newFSM(testLogger(t))
	f.nodeID = "n1"
	var buf strings.Builder
	if err := writeDocument(&buf, 42, model.BuildLevel+1, map[string]nodeInfo{}, model.NewCluster(), nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.Restore(io.NopCloser(strings.NewReader(buf.String()))); err != nil {
		t.Fatal(err)
	}
	h := f.haltedAt()
	if h == nil || h.index != 42 || !strings.Contains(h.Error(), "feature level 3 and this build has level 2") {
		t.Fatalf("halt: %v", h)
	}
	if f.appliedIndex() != 0 {
		t.Fatalf("applied index %d after a snapshot it did not load", f.appliedIndex())
	}
	if _, err := f.Snapshot(); err == nil {
		t.Fatal("a halted FSM took a snapshot")
	}
	// The level of a snapshot this build has is kept.
	g := newFSM(testLogger(t))
	buf.Reset()
	if err := writeDocument(&buf, 7, model.BuildLevel, map[string]nodeInfo{}, model.NewCluster(), nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := g.Restore(io.NopCloser(strings.NewReader(buf.String()))); err != nil {
		t.Fatal(err)
	}
	if g.haltedAt() != nil || g.clusterLevel() != model.BuildLevel || g.appliedIndex() != 7 {
		t.Fatalf("restore of a level-%d snapshot: halted %v, level %d, index %d", model.BuildLevel, g.haltedAt(), g.clusterLevel(), g.appliedIndex())
	}
}

// TestEveryEntryTagHasALevel: each of raftstore's entry tags has a row of
// the level table within this build's level, and an unknown tag none.
func TestEveryEntryTagHasALevel(t *testing.T) {
	for _, tag := range []byte{entryRegister, entryForget, entryReplace, entryClusterLevel, entryLeveled} {
		lvl, ok := model.KindLevel(tagKind(tag))
		if !ok || lvl < model.LevelBase || lvl > model.BuildLevel {
			t.Errorf("entry type %d (%q): level %d, known %v", tag, tagKind(tag), lvl, ok)
		}
	}
	if k := tagKind(99); k != "" {
		t.Errorf("entry type 99 is kind %q", k)
	}
	// Base-level entries go into the log as the base build writes them.
	if got := leveled(model.LevelBase, []byte{entryCommand, '{', '}'}); got[0] != entryCommand {
		t.Errorf("a base-level entry was wrapped: %v", got)
	}
}
