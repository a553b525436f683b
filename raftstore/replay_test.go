package raftstore

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// replayHeapBound is how much the heap may grow while a node replays a log
// holding an entry over the limits: the entry's own cost, not its units'.
const replayHeapBound = 256 << 20

// hugeDeploy is the deploy an older fixpoint committed: 200 bytes asking
// for a billion units.
func hugeDeploy() *model.Command {
	c := deployCmd()
	n := 1_000_000_000
	c.Deploy.Env.Services["db"] = model.ServiceSpec{Charm: "./db", CharmHash: "h1", Units: &n}
	return c
}

// TestReplayOfAnEntryOverTheLimits: a log holding a deploy of a billion
// units, written as an older version committed it, is replayed by a node
// that starts, refuses the entry as every replica does, keeps its state
// as it was and its heap within replayHeapBound, and goes on serving.
// The replay runs in a child process whose heap is watched: on code that
// applies such an entry, the child stops itself long before the machine
// runs out of memory, and the test fails saying so.
func TestReplayOfAnEntryOverTheLimits(t *testing.T) {
	if dir := os.Getenv("FIXPOINT_REPLAY_DIR"); dir != "" {
		replayChild(t, dir, os.Getenv("FIXPOINT_REPLAY_RAFT"))
		return
	}
	dir := t.TempDir()
	log := testLogger(t)
	n := &node{t: t, log: log, id: "n1", dir: dir, raftAddr: "127.0.0.1:0"}
	n.start(true, nil)
	settled(t, n)
	if _, err := n.s.Apply(ctxT(t, 30*time.Second), deployCmd()); err != nil {
		t.Fatalf("deploy: %v", err)
	}
	want := stateBytes(t, n.s)
	n.stop()
	writeFile(t, filepath.Join(dir, "want.json"), want)
	at := appendEntry(t, dir, hugeDeploy())

	child := exec.Command(os.Args[0], "-test.run=^TestReplayOfAnEntryOverTheLimits$", "-test.v", "-test.count=1")
	child.Env = append(os.Environ(), "FIXPOINT_REPLAY_DIR="+dir, "FIXPOINT_REPLAY_RAFT="+n.raftAddr,
		fmt.Sprintf("FIXPOINT_REPLAY_AT=%d", at))
	out, err := child.CombinedOutput()
	if err != nil {
		t.Fatalf("the node replaying entry %d (a deploy of a billion units) failed: %v\n%s", at, err, tail(out, 4000))
	}
	if !strings.Contains(string(out), "replayed: ") {
		t.Fatalf("the child ran no replay:\n%s", tail(out, 4000))
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "replayed: ") {
			t.Log(strings.TrimSpace(l))
		}
	}
}

// replayChild starts the node on dir, watching its heap, and checks what
// the replay did.
func replayChild(t *testing.T, dir, raftAddr string) {
	var at uint64
	fmt.Sscan(os.Getenv("FIXPOINT_REPLAY_AT"), &at)
	base := heapBytes()
	peak := watchHeap(t, base+replayHeapBound)

	// The FSM alone, as raft hands it the entry on two replicas.
	data, err := encodeEntry(entryCommand, hugeDeploy())
	if err != nil {
		t.Fatal(err)
	}
	var refusals []string
	for range 2 {
		f := newFSM(hclog.NewNullLogger())
		out := f.Apply(&raft.Log{Index: 7, Term: 1, Type: raft.LogCommand, Data: data})
		err, _ := out.(error)
		if err == nil || !strings.Contains(err.Error(), "--max-units-per-service") {
			t.Fatalf("the FSM answered %v to a deploy of a billion units, want a refusal naming --max-units-per-service", out)
		}
		if len(f.cluster.Default.Units) != 0 || f.cluster.Default.Index != 7 {
			t.Fatalf("the refused entry left %d units, index %d", len(f.cluster.Default.Units), f.cluster.Default.Index)
		}
		refusals = append(refusals, err.Error())
	}
	if refusals[0] != refusals[1] {
		t.Fatalf("two replicas refused differently: %q, %q", refusals[0], refusals[1])
	}

	// The node on the log that holds it.
	n := &node{t: t, log: testLogger(t), id: "n1", dir: dir, raftAddr: raftAddr}
	t.Cleanup(n.stop)
	n.start(false, nil)
	rafttest.Eventually(t, time.Minute, "the node leads and has applied its log", func() error {
		if !n.s.IsLeader() || n.s.Index() <= at {
			return fmt.Errorf("leader %v, applied index %d, entry at %d", n.s.IsLeader(), n.s.Index(), at)
		}
		return nil
	})
	want := strings.TrimSpace(readFile(t, filepath.Join(dir, "want.json")))
	if got := stateBytes(t, n.s); withoutIndex(t, got) != withoutIndex(t, want) {
		t.Fatalf("the state after the replay differs:\n got %s\nwant %s", got, want)
	}
	if _, err := n.s.Apply(ctxT(t, 30*time.Second), machineCmd("m1", "10.0.0.1")); err != nil {
		t.Fatalf("the node after the replay: %v", err)
	}
	fmt.Printf("replayed: entry %d refused (%s); heap grew by at most %d MiB\n", at, firstLine(refusals[0]), (peak()-base)>>20)
}

// appendEntry writes c into the node's Raft log after its last entry, in
// the last entry's term, as if a leader had appended it before stopping;
// it returns the entry's index.
func appendEntry(t *testing.T, dir string, c *model.Command) uint64 {
	t.Helper()
	data, err := encodeEntry(entryCommand, c)
	if err != nil {
		t.Fatal(err)
	}
	return appendRaw(t, dir, data)
}

// appendRaw writes an encoded entry into the node's Raft log after its
// last entry, in the last entry's term, as if a leader had appended it
// before stopping; it returns the entry's index.
func appendRaw(t *testing.T, dir string, data []byte) uint64 {
	t.Helper()
	w, err := openWAL(filepath.Join(dir, walDir), walSegmentSize, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	last, err := w.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	var prev raft.Log
	if err := w.GetLog(last, &prev); err != nil {
		t.Fatal(err)
	}
	if err := w.StoreLog(&raft.Log{Index: last + 1, Term: prev.Term, Type: raft.LogCommand, Data: data, AppendedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return last + 1
}

// heapBytes is the memory held by live and unswept heap objects.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// watchHeap stops the process, saying why, once the heap passes bound: a
// test of unbounded allocation must not take the machine down with it. It
// returns the peak seen so far.
func watchHeap(t *testing.T, bound uint64) func() uint64 {
	var peak = make(chan uint64, 1)
	peak <- heapBytes()
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			h := heapBytes()
			p := <-peak
			peak <- max(p, h)
			if h > bound {
				fmt.Fprintf(os.Stderr, "the heap grew to %d MiB, past the %d MiB bound: the replay allocates without bound\n", h>>20, bound>>20)
				os.Exit(3)
			}
		}
	}()
	return func() uint64 {
		p := <-peak
		peak <- p
		return p
	}
}

func withoutIndex(t *testing.T, state string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(state), &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "index")
	b, _ := json.Marshal(m)
	return string(b)
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
