// Package sim simulates an environment in memory: the same model.State and
// commands as the control plane, without Raft, with Go reconcile functions
// called in-process and other hooks run as real processes.
//
// Every schedule (which of the units that may run now run in a round, in
// which order, how their results are batched, whose results are delayed)
// must reach the same fixed point; the Report says whether they do, how
// many reconciles it took, and when they do not, the cycle and the keys
// that keep changing, and who writes them.
//
// What may run now, and what a run is given, is decided by
// engine/schedule, as in the controller, over universes built afresh at
// every step (Runnable, Handout); a property test holds the two to the
// same decisions. Charm directories, old-hook charms and environment
// files come in through package simdir, so that this package builds
// without the CUE evaluator. charmapi/charmtest is the layer for charm
// tests over both; `fixpoint charm test` runs them on packed charms.
//
// Simulations are deterministic given Options.Seed, as long as the hooks
// are.
package sim
