package passq

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// TestAPassTakesEveryLookOfOneAdd: looks added together are served in one
// pass (up to max), in order; what a pass leaves is served first by the
// next; drained is called once the queue is dry after a pass that handed
// work, and not after passes that handed none.
func TestAPassTakesEveryLookOfOneAdd(t *testing.T) {
	var mu sync.Mutex
	var passes [][]int
	done := make(chan struct{}, 4)
	drained := make(chan struct{}, 4)
	served := 0
	q := New(3, func(batch []int) ([]int, bool) {
		mu.Lock()
		defer mu.Unlock()
		passes = append(passes, slices.Clone(batch))
		// The first pass leaves its last look for the next.
		if len(passes) == 1 {
			served += len(batch) - 1
			return batch[len(batch)-1:], false
		}
		served += len(batch)
		if served == 5 {
			done <- struct{}{}
		}
		return nil, slices.Contains(batch, 5)
	}, func() { drained <- struct{}{} })
	q.Add(1, 2, 3, 4, 5)
	<-done
	<-drained
	mu.Lock()
	defer mu.Unlock()
	want := [][]int{{1, 2, 3}, {3, 4, 5}}
	if len(passes) != 2 || !slices.Equal(passes[0], want[0]) || !slices.Equal(passes[1], want[1]) {
		t.Fatalf("passes %v; want %v", passes, want)
	}
	if q.Passes() != 2 {
		t.Fatalf("%d passes counted; want 2", q.Passes())
	}
}

// TestNoDrainWithoutWork: a queue that ran dry after passes that handed
// nothing is no end of a burst.
func TestNoDrainWithoutWork(t *testing.T) {
	var drained atomic.Int64
	served := make(chan struct{})
	q := New(8, func(batch []int) ([]int, bool) {
		close(served)
		return nil, false
	}, func() { drained.Add(1) })
	q.Add(1)
	<-served
	// The server stops once the queue is dry: take says so under the
	// queue's lock.
	for {
		q.mu.Lock()
		serving := q.serving
		q.mu.Unlock()
		if !serving {
			break
		}
		runtime.Gosched()
	}
	if drained.Load() != 0 {
		t.Fatal("a pass that handed out nothing was taken for the end of a burst")
	}
}
