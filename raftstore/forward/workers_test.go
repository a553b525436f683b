package forward

import (
	"sync"
	"testing"
	"time"
)

// TestWorkersRunAllAtOnceAndStay: functions that wait for each other all
// run (none waits for a worker), and once they are done the workers take
// the next function instead of new goroutines.
func TestWorkersRunAllAtOnceAndStay(t *testing.T) {
	w := &workers{jobs: make(chan func()), idle: time.Minute}
	const n = 50
	var all, done sync.WaitGroup
	all.Add(n)
	done.Add(n)
	for range n {
		w.run(func() {
			all.Done()
			all.Wait() // ends only when all n run at once
			done.Done()
		})
	}
	done.Wait()
	if got := w.started.Load(); got != n {
		t.Fatalf("%d goroutines for %d functions running at once", got, n)
	}
	// The workers go idle right after; a function handed to one then
	// starts no goroutine.
	deadline := time.Now().Add(time.Minute)
	for {
		if runOne(w) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("every function started a goroutine (%d): no worker was reused", w.started.Load())
		}
	}
}

// TestAnIdleWorkerEnds: a worker with nothing to do ends after its idle
// time: a later function starts a new goroutine.
func TestAnIdleWorkerEnds(t *testing.T) {
	w := &workers{jobs: make(chan func()), idle: time.Millisecond}
	runOne(w)
	deadline := time.Now().Add(time.Minute)
	for {
		if runOne(w) == 1 {
			return // the first worker had ended; this one is new
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines started: an idle worker never ended", w.started.Load())
		}
		time.Sleep(5 * time.Millisecond) // longer than the idle time
	}
}

// runOne runs one function on w, waits for it, and returns how many
// goroutines w started for it: 0 if a worker took it.
func runOne(w *workers) int64 {
	before := w.started.Load()
	ran := make(chan struct{})
	w.run(func() { close(ran) })
	<-ran
	return w.started.Load() - before
}
