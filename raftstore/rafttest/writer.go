package rafttest

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Write makes the i-th write of a Writer. It returns the key and value
// written and whether the cluster acknowledged it; an error stops the
// writer (a write the cluster refused: the test is wrong, not the
// cluster). A write that was not acknowledged may still have landed.
type Write func(ctx context.Context, i int) (key, value string, acked bool, err error)

// writeTimeout bounds one write: a cluster changing under the writer may
// take an election to answer.
const writeTimeout = 20 * time.Second

// Writer applies writes one after another until halted and keeps those
// acknowledged: the steady load of a test that changes a cluster under
// it, which then checks that nothing acknowledged was lost.
type Writer struct {
	write Write
	stop  chan struct{}
	done  chan struct{}
	halt  sync.Once

	mu   sync.Mutex
	acks map[string]string
	err  error
	// acked and unclear count writes acknowledged and not.
	acked, unclear atomic.Int64
}

// StartWriter starts writing; t's cleanup halts it.
func StartWriter(t testing.TB, write Write) *Writer {
	w := &Writer{write: write, acks: map[string]string{}, stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	t.Cleanup(w.Halt)
	return w
}

func (w *Writer) run() {
	defer close(w.done)
	for i := 0; ; i++ {
		select {
		case <-w.stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		key, value, acked, err := w.write(ctx, i)
		cancel()
		switch {
		case err != nil:
			w.mu.Lock()
			w.err = fmt.Errorf("write %d (%s): %w", i, key, err)
			w.mu.Unlock()
			return
		case acked:
			w.mu.Lock()
			w.acks[key] = value
			w.mu.Unlock()
			w.acked.Add(1)
		default:
			w.unclear.Add(1)
		}
	}
}

// Acked is a copy of the writes acknowledged so far, key to value.
func (w *Writer) Acked() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.acks)
}

// Count is how many writes were acknowledged so far.
func (w *Writer) Count() int64 { return w.acked.Load() }

// Unclear is how many writes got no acknowledgement.
func (w *Writer) Unclear() int64 { return w.unclear.Load() }

// WaitMore waits until n more writes are acknowledged, and fails t if
// the writer stopped on an error or the wait outlasts within.
func (w *Writer) WaitMore(t testing.TB, within time.Duration, what string, n int64) {
	t.Helper()
	want := w.Count() + n
	Eventually(t, within, what, func() error {
		w.mu.Lock()
		err := w.err
		w.mu.Unlock()
		if err != nil {
			t.Fatalf("%s: the writer stopped: %v", what, err)
		}
		if got := w.Count(); got < want {
			return fmt.Errorf("%d writes acknowledged, want %d (%d unclear)", got, want, w.Unclear())
		}
		return nil
	})
}

// Halt stops the writer and waits until its last write has ended.
func (w *Writer) Halt() {
	w.halt.Do(func() { close(w.stop) })
	<-w.done
}
