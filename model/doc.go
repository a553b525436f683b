// Package model holds fixpoint's domain types and the pure, deterministic
// rules over them: the environment as operators declare it, the state the
// Raft FSM replicates, and the commands that change that state.
//
// Nothing here does I/O, reads the clock or draws random numbers: every
// replica applies the same commands to the same state and must end with the
// same bytes. Anything time-dependent arrives inside a command.
//
// Beside it, not part of the replicated rules, are two leaves that the
// engine and raftstore both speak and so neither can own: model/fault,
// the error envelope every hop answers with, and model/backoff, the one
// rule that spaces retries.
package model
