package engine

import (
	"time"

	"github.com/fixpoint/fixpoint/engine/ledger"
	"github.com/fixpoint/fixpoint/model"
)

// SummaryLimit bounds the units a Summary names in each of its lists: a
// waiter at 100,000 units needs the counts and the first few culprits,
// not a line per unit.
const SummaryLimit = 20

// stuckLimit is how many units a Summary names as longest out of settled:
// the waiters' "still ..." line names three.
const stuckLimit = 3

// PhaseCounts counts units by phase. A unit whose machine agent is lost
// counts as Lost only, as status's first line counts it; Blocked (the
// workload said blocked) is counted besides the phase.
type PhaseCounts struct {
	Units       int `json:"units"`
	Pending     int `json:"pending"`
	Reconciling int `json:"reconciling"`
	Settled     int `json:"settled"`
	Error       int `json:"error"`
	Lost        int `json:"lost,omitempty"`
	Blocked     int `json:"blocked,omitempty"`
}

// count counts one unit in phase d times: 1 to count it in, -1 to take
// it out.
func (p *PhaseCounts) count(phase string, lost, blocked bool, d int) {
	p.Units += d
	if blocked {
		p.Blocked += d
	}
	switch {
	case lost:
		p.Lost += d
	case phase == Pending:
		p.Pending += d
	case phase == Reconciling:
		p.Reconciling += d
	case phase == Settled:
		p.Settled += d
	case phase == Error:
		p.Error += d
	}
}

// converged is the fixed point: nothing pending, reconciling or in error
// (units on a lost machine wait for it and do not hold it back).
func (p *PhaseCounts) converged() bool {
	return p.Pending == 0 && p.Reconciling == 0 && p.Error == 0
}

// ServiceCounts is one service's line in a Summary.
type ServiceCounts struct {
	Leader string `json:"leader,omitempty"`
	PhaseCounts
}

// UnitBrief names one unit in a Summary: its phase, since when (left out
// for blocked units: blocked is the workload's word, not a phase), and the
// error or workload message that says why.
type UnitBrief struct {
	Unit    string    `json:"unit"`
	Phase   string    `json:"phase"`
	Message string    `json:"message,omitempty"`
	Since   time.Time `json:"since,omitzero"`
}

// Summary is status without its per-unit lines: what a waiter needs to
// know whether the fixed point is reached, and who stands in the way. It
// answers GET /v1/status?summary=1; its size does not grow with the
// environment's units (only with its services).
type Summary struct {
	Index uint64 `json:"index"`
	// Generation is Status.Generation: a long poll passes it to wait for
	// the next change of what status shows.
	Generation  uint64 `json:"generation"`
	Environment string `json:"environment,omitempty"`
	Applying    bool   `json:"applying,omitempty"`
	Converged   bool   `json:"converged"`
	// Summary is status's first line, the same words.
	Summary  string                    `json:"summary"`
	Phases   PhaseCounts               `json:"phases"`
	Services map[string]*ServiceCounts `json:"services"`
	// Errors are the first units in error by name (SummaryLimit at most),
	// lost ones included as Status.FirstError counts them; MoreErrors
	// counts the others.
	Errors     []UnitBrief `json:"errors"`
	MoreErrors int         `json:"more_errors,omitempty"`
	// Blocked are the first units whose workload is blocked, on machines
	// that are not lost; MoreBlocked counts the others.
	Blocked     []UnitBrief `json:"blocked"`
	MoreBlocked int         `json:"more_blocked,omitempty"`
	// Stuck are the units longest out of settled (three at most);
	// MoreStuck counts the others out of settled.
	Stuck     []UnitBrief `json:"stuck"`
	MoreStuck int         `json:"more_stuck,omitempty"`
	// LostMachines are the lost machines that hold units, each with its
	// first units by name (SummaryLimit at most) and how many more.
	LostMachines []LostMachine `json:"lost_machines,omitempty"`
	// UnreachableNodes is Status.UnreachableNodes.
	UnreachableNodes []UnreachableNode `json:"unreachable_nodes,omitempty"`
	// Cluster is Status.Cluster.
	Cluster *model.ClusterLevel `json:"cluster,omitempty"`
}

// FirstError returns the first unit in error, by name, and its message,
// as Status.FirstError does.
func (s *Summary) FirstError() (string, string) {
	if len(s.Errors) == 0 {
		return "", ""
	}
	return s.Errors[0].Unit, s.Errors[0].Message
}

// SetApplying makes the summary say that the environment a starting `up`
// was given is not applied yet: nothing is converged until it is.
func (s *Summary) SetApplying() {
	s.Applying, s.Converged, s.Summary = true, false, applyingSummary
}

// SetApplying is Summary.SetApplying for the full status.
func (s *Status) SetApplying() {
	s.Applying, s.Converged, s.Summary = true, false, applyingSummary
}

// applyingSummary is status's first line while `up` applies.
const applyingSummary = "applying environment"

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

// cachedSummary is the last summary computed, for the limit it was asked
// with. Its lists are shared by the copies handed out, and never changed.
type cachedSummary struct {
	*Summary
	limit int
	// marks is the inbox's count of marks the summary took in.
	marks uint64
}

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
	lostOn := lostUnits{limit: limit}
	for name, n := range units {
		phase, lost := n.phase(), n&tallyLost != 0
		if lost {
			lostOn.add(st.Units[name].Machine, name)
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
	s.LostMachines = lostOn.list()
	if len(ss.phases) > len(st.Units) {
		// Marks of removed units: only then is the walk of the marks
		// worth it (the full status walks them every time).
		ss.prunePhasesLocked(st)
	}
	s.Converged = s.Phases.converged()
	s.Summary = summarize(st, s.Phases)
	return s
}

// noteSettledLocked keeps a settled unit's phase entry right for the full
// status, without adding marks: a unit status has shown in another phase
// is settled from now. Called with mu.
func (ss *statusState) noteSettledLocked(name string, now time.Time) {
	if m, ok := ss.phases[name]; ok && m.phase != Settled {
		ss.phases[name] = phaseEntry{Settled, now}
	}
}

func briefByName(a, b UnitBrief) bool { return model.UnitLess(a.Unit, b.Unit) }

// bySince orders the longest out of settled first, then by name.
func bySince(a, b UnitBrief) bool {
	if !a.Since.Equal(b.Since) {
		return a.Since.Before(b.Since)
	}
	return model.UnitLess(a.Unit, b.Unit)
}

// keepFirst inserts u into list, kept sorted by less and at most n long:
// the first n of a walk in any order, in O(n) per unit and no allocation
// once the list is full.
func keepFirst(list []UnitBrief, u UnitBrief, n int, less func(a, b UnitBrief) bool) []UnitBrief {
	if len(list) == n && !less(u, list[n-1]) {
		return list
	}
	i := len(list)
	for i > 0 && less(u, list[i-1]) {
		i--
	}
	if len(list) < n {
		list = append(list, UnitBrief{})
	}
	copy(list[i+1:], list[i:len(list)-1])
	list[i] = u
	return list
}
