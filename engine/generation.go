package engine

import (
	"sync"

	"github.com/fixpoint/fixpoint/engine/waiters"
)

// generation is status's change counter and the wake of its long polls,
// with its own lock: a status long poll waits on it without status's
// lock, and a change of the ledger notes it once the ledger's lock is
// released. Its lock is a leaf: nothing else is taken while it is held.
type generation struct {
	mu sync.Mutex
	b  waiters.Broadcast
}

func newGeneration() *generation { return &generation{b: waiters.NewBroadcast()} }

// note moves the generation and wakes its waiters.
func (g *generation) note() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.b.Notify()
}

// current is the generation now.
func (g *generation) current() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.b.Gen()
}

// wait returns a channel closed at the next note.
func (g *generation) wait() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.b.Wait()
}

// since returns a channel closed at the next note, or already closed if
// the generation moved past gen.
func (g *generation) since(gen uint64) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.b.Since(gen)
}
