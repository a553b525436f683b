package rafttest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A condition that comes to hold ends the wait; one that never does fails
// the test once the deadline passes, with what was awaited and why not.
func TestWaitsUntilAConditionHolds(t *testing.T) {
	var n atomic.Int32
	Eventually(t, time.Minute, "the third check", func() error {
		if n.Add(1) < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	Until(t, time.Minute, "the sixth check", func() bool { return n.Add(1) >= 6 })

	for name, wait := range map[string]func(tb testing.TB){
		"Eventually": func(tb testing.TB) {
			Eventually(tb, 20*time.Millisecond, "never", func() error { return errors.New("still no") })
		},
		"Until": func(tb testing.TB) { Until(tb, 20*time.Millisecond, "never", func() bool { return false }) },
	} {
		rec := &recorder{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			wait(rec)
		}()
		<-done
		if rec.failed == "" {
			t.Errorf("%s of a condition that never holds did not fail", name)
		}
	}
}

// recorder is a testing.TB whose Fatalf records the failure and ends
// the goroutine, as the real one does.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = format
	runtime.Goexit()
}

// A writer keeps what was acknowledged, counts what was not, and stops
// on an error, which fails the next wait for more writes.
func TestWriterKeepsTheAcknowledged(t *testing.T) {
	var mu sync.Mutex
	landed := map[string]string{}
	w := StartWriter(t, func(_ context.Context, i int) (string, string, bool, error) {
		key := fmt.Sprintf("k%d", i)
		mu.Lock()
		defer mu.Unlock()
		landed[key] = "v"
		return key, "v", i%3 != 2, nil
	})
	w.WaitMore(t, time.Minute, "ten writes", 10)
	w.Halt()
	acked := w.Acked()
	if int64(len(acked)) != w.Count() || w.Count() < 10 || w.Unclear() == 0 {
		t.Fatalf("%d acknowledged, count %d, %d unclear", len(acked), w.Count(), w.Unclear())
	}
	mu.Lock()
	defer mu.Unlock()
	for k := range acked {
		if landed[k] != "v" {
			t.Errorf("%s acknowledged but never written", k)
		}
	}

	failing := StartWriter(t, func(_ context.Context, i int) (string, string, bool, error) {
		if i == 3 {
			return "k3", "", false, errors.New("refused")
		}
		return fmt.Sprintf("k%d", i), "v", true, nil
	})
	rec := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		failing.WaitMore(rec, time.Minute, "more than the writer makes", 10)
	}()
	<-done
	if rec.failed == "" || failing.Count() != 3 {
		t.Errorf("a writer stopped by an error: wait failed %q, %d acknowledged", rec.failed, failing.Count())
	}
}
