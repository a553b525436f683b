package rafttest

import (
	"errors"
	"runtime"
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
