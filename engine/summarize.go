package engine

import (
	"github.com/fixpoint/fixpoint/engine/ledger"
	"github.com/fixpoint/fixpoint/model"
)

// summary is Controller.Summary at st; claims are the ledger's, read
// with the views it brought up to st. Waiters woken by one change share one
// summary: everything a summary shows moves the index, the generation
// (a lease that ends included) or the marks of units to recount.
func (ss *statusState) summary(st *model.State, limit int, claims map[string]ledger.ClaimSnapshot) *Summary {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	gen, marks := ss.changed.current(), ss.inbox.seq()
	last := ss.lastSummary
	if last == nil || last.Index != st.Index || last.Generation != gen || last.marks != marks || last.limit != limit {
		ss.claims = claims
		defer func() { ss.claims = nil }()
		last = &cachedSummary{Summary: ss.summaryLocked(st, limit), limit: limit, marks: marks}
		last.Generation = gen
		ss.lastSummary = last
		ss.timeline.record(st.EnvIndex, st.Index, ss.now(), last.Phases)
	}
	out := *last.Summary
	return &out
}

// summaryLocked makes a summary at st: the counts from the tally brought
// up to st (recountLocked), or from a walk of every unit while most are
// out of settled, and its lists from the units they name. Called with mu.
func (ss *statusState) summaryLocked(st *model.State, limit int) *Summary {
	now := ss.now()
	t := &ss.tally
	s := &Summary{
		Index:       st.Index,
		Environment: st.Name,
		Services:    make(map[string]*ServiceCounts, len(st.Services)),
		Errors:      []UnitBrief{},
		Blocked:     []UnitBrief{},
		Stuck:       []UnitBrief{},
	}
	for name, svc := range st.Services {
		s.Services[name] = &ServiceCounts{Leader: svc.Leader}
	}
	units := ss.walkLocked(st, now, s)
	if ss.recountLocked(st, now) {
		s.Phases = t.phases
		for name, sc := range s.Services {
			if pc := t.services[name]; pc != nil {
				sc.PhaseCounts = *pc
			}
		}
		units = ss.listedLocked()
	}
	var errs, blocked, stuck int
	onLost := lostUnits{limit: limit}
	for name, n := range units {
		phase, lost := n.phase(), n&tallyLost != 0
		if lost {
			onLost.add(st.Units[name].Machine, name)
		}
		if n&tallyBlocked != 0 && !lost {
			// Named without a since: blocked is the workload's word,
			// not a phase, and most blocked units are settled.
			blocked++
			s.Blocked = keepFirst(s.Blocked, UnitBrief{Unit: name, Phase: phase, Message: st.Units[name].Status.Message}, limit, briefByName)
		}
		if phase == Settled {
			continue
		}
		since := ss.phaseSinceLocked(name, phase, now, ss.claims[name])
		if phase == Error {
			errs++
			s.Errors = keepFirst(s.Errors, UnitBrief{Unit: name, Phase: phase, Message: st.Units[name].Error.Message, Since: since}, limit, briefByName)
		}
		stuck++
		s.Stuck = keepFirst(s.Stuck, UnitBrief{Unit: name, Phase: phase, Since: since}, stuckLimit, bySince)
	}
	s.MoreErrors = errs - len(s.Errors)
	s.MoreBlocked = blocked - len(s.Blocked)
	s.MoreStuck = stuck - len(s.Stuck)
	s.LostMachines = onLost.list()
	if len(ss.phases) > len(st.Units) {
		// Marks of removed units: only then is the walk of the marks
		// worth it (the full status walks them every time).
		ss.prunePhasesLocked(st)
	}
	s.Converged = s.Phases.converged()
	s.Summary = firstLine(st, s.Phases)
	return s
}
