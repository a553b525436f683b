package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
)

// movingStatus is a status that has moved on at every read, as it does
// while thousands of units settle: nothing in it holds a read back.
type movingStatus struct{ reads int }

func (m *movingStatus) WaitStatus(_ context.Context, _ bool, _ *engine.Status, _ time.Duration) (*engine.Status, error) {
	m.reads++
	return &engine.Status{Index: uint64(m.reads)}, nil
}

// TestUpPacesItsStatusReads: up's progress display reads the whole
// status; however fast the status moves, it reads at most once per pace
// (the first read at once), and an interrupt ends a paced wait.
func TestUpPacesItsStatusReads(t *testing.T) {
	const every = 40 * time.Millisecond
	src := &movingStatus{}
	p := &pacedStatus{src: src, every: every}
	ctx := context.Background()
	start := time.Now()
	var st *engine.Status
	for range 4 {
		var err error
		if st, err = p.WaitStatus(ctx, false, st, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el < 3*every || src.reads != 4 {
		t.Fatalf("4 reads took %s (%d reached the source); want at least %s between reads", el, src.reads, every)
	}
	ctx, cancel := context.WithCancel(ctx)
	p.every = time.Hour
	cancel()
	if _, err := p.WaitStatus(ctx, false, st, time.Second); !errors.Is(err, context.Canceled) || src.reads != 4 {
		t.Fatalf("interrupted wait: %v after %d reads", err, src.reads)
	}
}
