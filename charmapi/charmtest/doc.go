// Package charmtest tests charms without a cluster.
//
// A charm's reconcile hook is a function from a universe (everything a
// unit may see) to a result (what the unit writes). charmtest gives three
// levels of test for it:
//
//   - Unit tests: build a universe in a few lines (NewUniverse) or load one
//     from a JSON fixture (LoadUniverse, e.g. captured with `fixpoint debug
//     universe`), run a hook on it (Run) and assert on the result
//     (Result.ExpectLocal, ExpectStatus, ...). The hook is a Go reconcile
//     function called in-process (Func), an executable (Exec), or a charm
//     directory packed the way fixpoint packs it (Charm). Run runs the hook
//     twice and fails the test if the two results differ: a hook that is
//     not a function of its universe never settles.
//
//   - Simulation: describe an environment (NewEnv, or LoadEnv on an
//     environment file) and Simulate it in memory (engine/sim, whose
//     types charmtest names for charm tests): the same model.State and
//     commands as the control plane, without Raft, with Go reconcile
//     functions called in-process and other hooks run as real processes.
//     Every schedule (which stale units run in a round, in which order,
//     how their results are batched, whose results are delayed) must reach
//     the same fixed point; the Report says whether they do, how many
//     reconciles it took, and when they do not, the cycle and the keys
//     that keep changing, and who writes them.
//
//   - From the command line, `fixpoint charm test` runs the same
//     simulation on packed charms.
//
// Simulations are deterministic given SimOptions.Seed, as long as the
// hooks are.
//
// Dependencies: charmtest imports engine/sim, which reads charm metadata
// (charm.cue, or metadata.yaml and config.yaml) and environment files
// through schemas, so with the CUE evaluator a charm's test builds about
// 420 packages where charmapi alone builds about 70. The cost is a first
// build of a minute or so on a small machine, paid once per build cache;
// tests that need only universes and results can import charmapi alone.
package charmtest
