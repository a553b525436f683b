// Package engine is fixpoint's per-unit solver. It builds each unit's
// universe from the replicated state, hashes it to decide what is stale,
// hands stale units to agents, turns their hooks' results into commands,
// and tracks the environment's fixed point.
//
// What is desired lives in model; this package is how we get there.
package engine
