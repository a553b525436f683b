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
//     directory packed the way fixpoint packs it (charmdir.Charm). Run
//     runs the hook twice and fails the test if the two results differ: a
//     hook that is not a function of its universe never settles.
//
//   - Simulation: describe an environment (NewEnv with charms given by
//     their metadata, charmdir.NewEnv to deploy charm directories, or
//     charmdir.LoadEnv on an environment file) and Simulate it in memory
//     (engine/sim, whose types charmtest names for charm tests): the same
//     model.State and commands as the control plane, without Raft, with Go
//     reconcile functions called in-process and other hooks run as real
//     processes.
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
// Dependencies: charmtest needs neither the CUE evaluator nor the legacy
// adapter, and builds with fewer than 150 packages (a test pins it).
// Package charmdir, which reads charm directories (charm.cue, or
// metadata.yaml and config.yaml) and environment files through the CUE
// schemas and runs old-hook charms, builds about 420; its cost is a first
// build of a minute or so on a small machine, paid once per build cache.
package charmtest
