// Package engine is fixpoint's per-unit solver. It builds each unit's
// universe from the replicated state, hashes it to decide what is stale,
// hands stale units to agents, turns their hooks' results into commands,
// and tracks the environment's fixed point.
//
// What is desired lives in model; this package is how we get there.
// engine/DESIGN.md follows one change from the committed entry to the hook
// run and back, and says why each cache exists.
//
// The Controller wires three components, each owning its state and its
// lock: staleness (the views), dispatch (who gets which work when) and
// status (what status shows). Locks are taken in one order, never the
// other way:
//
//  1. the store's read lock (Store.View);
//  2. one component's lock: dispatch.mu or statusState.mu, never both;
//  3. leaves, each held alone and never while another lock is taken:
//     staleness.mu, lookQueue.mu, builders.mu, marks.mu, generation.mu,
//     agents.mu, History.mu, memberCache.mu and pass.mu.
//
// No component takes another's lock: dispatch and status call
// staleness's methods, which take staleness.mu; dispatch tells status
// what moved through status's leaf-locked inbox (marks) and generation;
// status reads claims as marks dispatch hands out. No lock but the
// store's is held while waiting for the store. The secrets' schedule
// watch (WatchSecrets) takes the store's lock alone.
package engine
