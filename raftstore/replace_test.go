package raftstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// machineWriter registers machines through the nodes route holds, round
// robin: what rafttest.Writer applies here.
func machineWriter(route *atomic.Pointer[[]*node]) rafttest.Write {
	return func(ctx context.Context, i int) (string, string, bool, error) {
		via := *route.Load()
		n := via[i%len(via)]
		name, addr := fmt.Sprintf("w%d", i), fmt.Sprintf("10.2.%d.%d", i/250, i%250)
		_, err := n.s.Apply(ctx, machineCmd(name, addr))
		if errors.Is(err, ErrRefused) {
			return name, addr, false, fmt.Errorf("through %s: %w", n.id, err)
		}
		return name, addr, err == nil, nil
	}
}

// holdsAll reports the first acknowledged write n lacks.
func holdsAll(n *node, acked map[string]string) error {
	got := machines(n.s)
	for name, addr := range acked {
		if got[name] != addr {
			return fmt.Errorf("%s lacks acknowledged write %s", n.id, name)
		}
	}
	return nil
}

// replacePreload is how many machines the state holds before the
// failure: a snapshot of some size for the new node to install.
const replacePreload = 2000

// preload registers n machines through node, 16 at a time.
func preload(t *testing.T, ctx context.Context, via *node, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 16 {
				if _, err := via.s.Apply(ctx, machineCmd(fmt.Sprintf("p%d", i), fmt.Sprintf("10.3.%d.%d", i/250, i%250))); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("preload: %v", err)
	}
}

// TestReplaceNodeUnderLoad is docs/operating.md's "Replacing a node":
// n3's disk dies under a steady writer; it is removed, and a new n4 with
// an empty disk joins, catches up by snapshot install (the others
// compacted their logs) and serves linearizable reads holding every
// write acknowledged before it started. The writer never stops: it is
// acknowledged throughout, nothing acknowledged is lost, and n4 ends
// with the others' state. How long n4 took to serve reads is logged.
func TestReplaceNodeUnderLoad(t *testing.T) {
	log := testLogger(t)
	ctx := ctxT(t, 3*time.Minute)
	nodes := make([]*node, 4)
	for i := range nodes {
		nodes[i] = newNode(t, log, fmt.Sprintf("n%d", i+1))
		// Compaction drops all but a few entries, so that a joiner
		// catches up by snapshot install (TestCluster says why segments
		// are small).
		nodes[i].trailing = 4
		nodes[i].segment = 1 << 10
	}
	n1, n2, n3, n4 := nodes[0], nodes[1], nodes[2], nodes[3]
	n1.start(true, nil)
	n2.start(false, []string{n1.httpAddr})
	n3.start(false, []string{n1.httpAddr})
	three := []*node{n1, n2, n3}
	rafttest.Eventually(t, time.Minute, "three voters", func() error { return voters(three, 3) })
	if _, err := n1.s.Apply(ctx, deployCmd()); err != nil {
		t.Fatal(err)
	}
	preload(t, ctx, n1, replacePreload)

	var route atomic.Pointer[[]*node]
	route.Store(&[]*node{n1, n2})
	w := rafttest.StartWriter(t, machineWriter(&route))
	w.WaitMore(t, 2*time.Minute, "writes before the failure", 50)

	// n3's disk dies; the operator removes it: fixpoint cluster remove n3.
	n3.stop()
	if err := os.RemoveAll(n3.dir); err != nil {
		t.Fatal(err)
	}
	if err := n1.s.Remove(ctx, "n3"); err != nil {
		t.Fatalf("remove n3: %v", err)
	}
	two := []*node{n1, n2}
	rafttest.Eventually(t, time.Minute, "n3 out of the configuration", func() error { return voters(two, 2) })
	w.WaitMore(t, 2*time.Minute, "writes after the removal", 20)
	for _, n := range two {
		if err := n.s.Snapshot(ctx); err != nil {
			t.Fatal(err)
		}
	}
	w.WaitMore(t, 2*time.Minute, "writes after the snapshots", 20)

	// A fresh n4 on an empty disk joins through the survivors.
	before, written := w.Acked(), w.Count()
	start := time.Now()
	n4.start(false, []string{n1.httpAddr, n2.httpAddr})
	joined := time.Since(start)
	for {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := n4.s.Linearize(rctx)
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("n4 never served a linearizable read: %v", err)
		}
	}
	served := time.Since(start)
	if err := holdsAll(n4, before); err != nil {
		t.Fatalf("n4's first linearizable read: %v", err)
	}
	during := w.Count() - written
	if n4.s.fsm.restores.Load() == 0 {
		t.Error("n4 caught up without a snapshot install")
	}
	route.Store(&[]*node{n1, n2, n4})
	w.WaitMore(t, 2*time.Minute, "writes through n4 too", 30)
	w.Halt()

	final := []*node{n1, n2, n4}
	rafttest.Eventually(t, time.Minute, "n4 a voter", func() error { return voters(final, 3) })
	acked := w.Acked()
	rafttest.Eventually(t, time.Minute, "n4 holds the others' state", func() error { return converged(t, final...) })
	for _, n := range final {
		if err := n.s.Linearize(ctx); err != nil {
			t.Fatal(err)
		}
		if err := holdsAll(n, acked); err != nil {
			t.Error(err)
		}
	}
	if during == 0 {
		t.Error("no write was acknowledged while n4 caught up: the writer stopped")
	}
	t.Logf(`{"replace_node": {"joined_ms": %d, "serves_reads_ms": %d, "writes_while_catching_up": %d, "acknowledged": %d, "unclear": %d, "state_index": %d}}`,
		joined.Milliseconds(), served.Milliseconds(), during, len(acked), w.Unclear(), n4.s.Index())
}
