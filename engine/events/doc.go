// Package events derives the legacy (Juju-style) hook events that lead from
// what a unit saw at its last successful reconcile to what it sees now.
//
// Derivation is a pure function of two Snapshots, so it is the same whether
// the snapshots come from the replicated state (settings revisions, see
// FromSeen) or from universe JSON files (content hashes, see FromUniverse).
// Because only the two end points are compared, coalescing falls out the
// way it does in Juju's uniter: ten edits between two reconciles are one
// relation-changed carrying the latest data, a unit that joined and left in
// between produces nothing, and members that vanished while an agent was
// down show up as relation-departed.
package events
