// Package engine is fixpoint's per-unit solver. It builds each unit's
// universe from the replicated state, hashes it to decide what is stale,
// hands stale units to agents, turns their hooks' results into commands,
// and tracks the environment's fixed point.
//
// What is desired lives in model; this package is how we get there.
// engine/DESIGN.md follows one change from the committed entry to the hook
// run and back, gives the lock order, and says why each cache exists.
//
// The Controller (controller.go) is one call per method into components that
// each own their state and lock: the ledger (engine/ledger: queue,
// claims, leases, timers, operations and the views), the polls' sleep
// (engine/waiters), the pass queue (engine/passq), the agents' contacts
// (engine/liveness), status, and the glue that runs a poll, a pass and a
// report (handout). The ledger wakes nobody: each change returns what it
// owes (ledger.Owed), applied once its lock is released.
package engine
