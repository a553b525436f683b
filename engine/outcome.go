package engine

// Outcome is what a waiter (wait, apply --wait, up --until-converged)
// concludes from a status summary: the one rule behind their exit codes.
type Outcome int

const (
	// Waiting: units are still pending or reconciling, or in error while
	// the wait stops only once the others settle; or the environment a
	// starting `up` was given is not applied yet.
	Waiting Outcome = iota
	// FixedPoint: every unit settled (some may say they are blocked).
	FixedPoint
	// FixedPointExceptLost: every unit settled but those on lost
	// machines, which cannot run until their agents are back. Never
	// reported as a plain fixed point: those units are wanted.
	FixedPointExceptLost
	// UnitsInError: a unit is in error; with keepGoing, only once every
	// unit not in error has settled.
	UnitsInError
)

// Outcome says what a waiter concludes from s. keepGoing waits for every
// unit not in error to settle before it reports the errors.
func (s *Summary) Outcome(keepGoing bool) Outcome {
	p := s.Phases
	switch {
	case s.Applying:
		// Errors from before the apply are no answer about it.
		return Waiting
	case s.Converged && p.Lost > 0:
		return FixedPointExceptLost
	case s.Converged:
		return FixedPoint
	case len(s.Errors) == 0:
		return Waiting
	case !keepGoing || p.Pending+p.Reconciling == 0:
		return UnitsInError
	}
	return Waiting
}
