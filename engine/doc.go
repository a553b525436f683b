// Package engine is fixpoint's per-unit solver. It builds each unit's
// universe from the replicated state, hashes it to decide what is stale,
// hands stale units to agents, turns their hooks' results into commands,
// and tracks the environment's fixed point.
//
// What is desired lives in model; this package is how we get there.
// engine/DESIGN.md follows one change from the committed entry to the hook
// run and back, and says why each cache exists.
//
// Locks are taken in one order, never the other way: the store's read
// lock (Store.View); Controller.mu; lookQueue.mu and builders.mu; then the
// leaves memberCache.mu, pass.mu, History.mu, generation.mu and agents.mu,
// which are never held while another lock is taken. Controller.mu is never held while waiting
// for the store.
package engine
