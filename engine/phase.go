package engine

import (
	"time"

	"github.com/fixpoint/fixpoint/engine/ledger"
	"github.com/fixpoint/fixpoint/model"
)

// phaseLocked is unit name's phase, the one rule status and its summary
// share; cl is its claim, if any. Called with mu.
func (ss *statusState) phaseLocked(name string, u *model.Unit, cl ledger.ClaimSnapshot, now time.Time) string {
	v, vs := ss.stale.ViewOf(name)
	switch {
	case cl.Claimed && now.Before(cl.Until) && !cl.Timer:
		// An update-status run leaves a settled unit settled.
		return Reconciling
	case u.Error != nil && u.Resolved == nil && errorStands(u.Error, v, vs):
		return Error
	case u.Error != nil:
		// Resolved, or what it sees changed since: it runs again.
		return Pending
	case v == nil || vs == ledger.ViewHashUnknown || v.Hash != u.Reconciled:
		return Pending
	default:
		return Settled
	}
}

// errorStands says whether a unit's error e is its phase, given its view
// v and how far that is behind (vs): a diverged unit stays in error until
// an operator acts, a failed hook only while the unit sees the universe
// that failed. Once what it sees changed (an operator's apply, a
// neighbour's settings) it runs again, and an error from before is no
// answer about the environment after.
func errorStands(e *model.UnitError, v *ledger.View, vs ledger.ViewState) bool {
	if e.Kind == model.ErrDiverged {
		return true
	}
	return v != nil && vs != ledger.ViewHashUnknown && v.Hash == e.Hash
}

// prunePhasesLocked forgets the phase marks of units that are gone.
// Called with mu.
func (ss *statusState) prunePhasesLocked(st *model.State) {
	for name := range ss.phases {
		if st.Units[name] == nil {
			delete(ss.phases, name)
		}
	}
}

// phaseSinceLocked is when unit name entered phase: the hand-out time of a
// reconciling unit, otherwise the first status that showed the phase.
func (ss *statusState) phaseSinceLocked(name, phase string, now time.Time, cl ledger.ClaimSnapshot) time.Time {
	if ss.phases == nil {
		ss.phases = map[string]phaseEntry{}
	}
	if phase == Reconciling && cl.Claimed {
		ss.phases[name] = phaseEntry{phase, cl.At}
		return cl.At
	}
	m, ok := ss.phases[name]
	if !ok || m.phase != phase {
		m = phaseEntry{phase, now}
		ss.phases[name] = m
	}
	return m.since
}

// noteSettledLocked keeps a settled unit's phase entry right for the full
// status, without adding marks: a unit status has shown in another phase
// is settled from now. Called with mu.
func (ss *statusState) noteSettledLocked(name string, now time.Time) {
	if m, ok := ss.phases[name]; ok && m.phase != Settled {
		ss.phases[name] = phaseEntry{Settled, now}
	}
}
