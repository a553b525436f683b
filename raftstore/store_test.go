package raftstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// TestSingleNodeRestart: what a node applied survives a restart, first
// from the log alone, then from a snapshot plus the log after it, and the
// state comes back byte for byte at the same index.
func TestSingleNodeRestart(t *testing.T) {
	log := testLogger(t)
	n := newNode(t, log, "n1")
	n.start(true, nil)
	settled(t, n)
	ctx := ctxT(t, 30*time.Second)

	resp, err := n.s.Apply(ctx, deployCmd())
	if err != nil {
		t.Fatalf("deploy: %v", err)
	}
	if resp.Index == 0 || len(resp.Changes) == 0 {
		t.Fatalf("deploy answered %+v, want an index and changes", resp)
	}
	if _, err := n.s.Apply(ctx, machineCmd("m1", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	var units int
	n.s.View(func(st *model.State) error { units = len(st.Units); return nil })
	if units != 1 {
		t.Fatalf("deploy made %d units, want 1", units)
	}

	// Restart from the log alone.
	want, idx := stateBytes(t, n.s), n.s.Index()
	n.stop()
	n.start(true, nil) // Bootstrap again must be a no-op on existing state.
	rafttest.Eventually(t, time.Minute, "replay after restart", func() error {
		if err := n.s.Linearize(ctx); err != nil {
			return err
		}
		if got := n.s.Index(); got != idx {
			t.Fatalf("index after restart %d, want %d", got, idx)
		}
		return nil
	})
	if got := stateBytes(t, n.s); got != want {
		t.Fatalf("state after restart differs:\n got %s\nwant %s", got, want)
	}
	if r := n.s.fsm.restores.Load(); r != 0 {
		t.Fatalf("restart restored %d snapshots, want none: state came from the log", r)
	}

	// Snapshot, write more, restart: snapshot plus log.
	if err := n.s.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"m2", "m3"} {
		if _, err := n.s.Apply(ctx, machineCmd(m, "10.0.0.2")); err != nil {
			t.Fatal(err)
		}
	}
	want, idx = stateBytes(t, n.s), n.s.Index()
	n.stop()
	n.start(false, nil)
	if n.s.fsm.restores.Load() != 1 {
		t.Fatalf("restart restored %d snapshots, want 1", n.s.fsm.restores.Load())
	}
	if err := n.s.Linearize(ctx); err != nil {
		t.Fatal(err)
	}
	if got := n.s.Index(); got != idx {
		t.Fatalf("index after snapshot restart %d, want %d", got, idx)
	}
	if got := stateBytes(t, n.s); got != want {
		t.Fatalf("state after snapshot restart differs:\n got %s\nwant %s", got, want)
	}
}

// TestRequestIDDedupe: a command applied twice under one request id
// changes the state once; a refused command is ErrRefused.
func TestRequestIDDedupe(t *testing.T) {
	n := newNode(t, testLogger(t), "n1")
	n.start(true, nil)
	ctx := ctxT(t, 30*time.Second)

	first := machineCmd("m1", "10.0.0.1")
	first.RequestID = "req-1"
	r1, err := n.s.Apply(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.s.Apply(ctx, machineCmd("m1", "10.0.0.2")); err != nil {
		t.Fatal(err)
	}
	again := machineCmd("m1", "10.0.0.1")
	again.RequestID = "req-1"
	r2, err := n.s.Apply(ctx, again)
	if err != nil {
		t.Fatal(err)
	}
	if !r2.Duplicate || r2.Index != r1.Index {
		t.Fatalf("second apply answered %+v, want a duplicate of index %d", r2, r1.Index)
	}
	if got := machines(n.s)["m1"]; got != "10.0.0.2" {
		t.Fatalf("m1 address %q: the duplicate was applied again", got)
	}

	// An empty request id is filled in, so the caller can retry with it.
	cmd := machineCmd("m2", "10.0.0.3")
	if _, err := n.s.Apply(ctx, cmd); err != nil {
		t.Fatal(err)
	}
	if cmd.RequestID == "" {
		t.Fatal("Apply left the request id empty")
	}

	// Refused: not retried, and says why.
	start := time.Now()
	_, err = n.s.Apply(ctx, machineCmd("Bad Name", "10.0.0.4"))
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("bad machine name: got %v, want ErrRefused", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("refusal took %s: it was retried", d)
	}
	t.Logf("refusal: %v", err)
}

// TestWatch: WaitIndex wakes on a new entry, times out quietly, and reports
// reset to watchers when a backup replaces the state.
func TestWatch(t *testing.T) {
	n := newNode(t, testLogger(t), "n1")
	n.start(true, nil)
	settled(t, n)
	ctx := ctxT(t, 30*time.Second)
	if _, err := n.s.Apply(ctx, machineCmd("m1", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	var backup bytes.Buffer
	if err := n.s.SaveBackup(ctx, &backup); err != nil {
		t.Fatal(err)
	}

	// Times out without error.
	idx := n.s.Index()
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	got, reset, err := n.s.WaitIndex(short, idx)
	cancel()
	if err != nil || reset || got != idx {
		t.Fatalf("idle WaitIndex = %d, %v, %v; want %d, false, nil", got, reset, err, idx)
	}

	// Wakes on apply.
	type result struct {
		idx   uint64
		reset bool
		err   error
	}
	wait := func(after uint64) <-chan result {
		ch := make(chan result, 1)
		go func() {
			i, r, err := n.s.WaitIndex(ctx, after)
			ch <- result{i, r, err}
		}()
		return ch
	}
	woken := wait(idx)
	resp, err := n.s.Apply(ctx, machineCmd("m2", "10.0.0.2"))
	if err != nil {
		t.Fatal(err)
	}
	r := <-woken
	if r.err != nil || r.reset || r.idx < resp.Index {
		t.Fatalf("WaitIndex after apply = %+v; want index >= %d, no reset", r, resp.Index)
	}

	// Restore: a blocked watcher and a late one both see reset.
	before := n.s.Index()
	blocked := wait(before)
	if err := n.s.RestoreBackup(ctx, bytes.NewReader(backup.Bytes())); err != nil {
		t.Fatal(err)
	}
	r = <-blocked
	if r.err != nil || !r.reset || r.idx <= before {
		t.Fatalf("blocked watcher after restore = %+v; want reset at an index > %d", r, before)
	}
	if _, reset, _ := n.s.WaitIndex(ctx, before); !reset {
		t.Fatal("late watcher from before the restore not reset")
	}
	short, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
	_, reset, _ = n.s.WaitIndex(short, n.s.Index())
	cancel()
	if reset {
		t.Fatal("watcher from after the restore reset")
	}
	if m := machines(n.s); len(m) != 1 || m["m1"] != "10.0.0.1" {
		t.Fatalf("machines after restore %v, want only m1", m)
	}
	var stIdx uint64
	n.s.View(func(st *model.State) error { stIdx = st.Index; return nil })
	if stIdx != n.s.Index() {
		t.Fatalf("state index %d != store index %d", stIdx, n.s.Index())
	}
}

// TestViewReentrant: the accessors may be called from inside View while
// entries are being applied (a nested read lock would deadlock behind the
// FSM's waiting write lock).
func TestViewReentrant(t *testing.T) {
	n := newNode(t, testLogger(t), "n1")
	n.start(true, nil)
	ctx := ctxT(t, 30*time.Second)
	done := make(chan error, 1)
	go func() {
		for i := 0; i < 50; i++ {
			if _, err := n.s.Apply(ctx, machineCmd(fmt.Sprintf("m%d", i), "10.0.0.1")); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return
		default:
		}
		n.s.View(func(st *model.State) error {
			if st.Index != n.s.Index() {
				t.Errorf("state index %d, store index %d", st.Index, n.s.Index())
			}
			_ = n.s.LeaderHTTP()
			_ = n.s.IsLeader()
			return nil
		})
	}
}
