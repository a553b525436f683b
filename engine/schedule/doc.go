// Package schedule holds the engine's scheduling rules as pure functions
// over model.State and a clock: which unit may need a run, which may run
// now (waves), when a failed one retries (backoff), what attempt and
// events a run is given, and when a unit's last universe is worth keeping
// to explain its divergence.
//
// The controller (package engine) applies them to its cached views under
// its lock; the simulator (engine/sim) applies them to universes it builds
// afresh at every step. Both therefore make the same decisions, which a
// property test in engine/sim checks.
package schedule
