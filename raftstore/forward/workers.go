package forward

import (
	"sync/atomic"
	"time"
)

// workers runs functions on goroutines that outlive one call. A batch
// member's handler grows its goroutine's stack (JSON decoding, the wait
// for its commit) to several times what a new goroutine starts with; a
// fresh goroutine per member paid for that copying every time, 8 % of a
// leader's CPU at 64 writers through a follower. A worker keeps the stack
// it grew for the next member.
type workers struct {
	jobs    chan func()
	idle    time.Duration
	started atomic.Int64 // goroutines started, for tests
}

// memberWorkers run the members of the batches this node serves.
var memberWorkers = &workers{jobs: make(chan func()), idle: 10 * time.Second}

// run runs f on an idle worker, or on a new one if none is idle: members
// of a batch wait on each other's commits, so they never wait for a
// worker.
func (w *workers) run(f func()) {
	select {
	case w.jobs <- f:
	default:
		w.started.Add(1)
		go w.work(f)
	}
}

// work runs f, then whatever it is handed, until it has been idle for
// w.idle.
func (w *workers) work(f func()) {
	idle := time.NewTimer(w.idle)
	defer idle.Stop()
	for {
		f()
		idle.Reset(w.idle)
		select {
		case f = <-w.jobs:
		case <-idle.C:
			return
		}
	}
}
