package engine

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fixpoint/fixpoint/model"
)

// Phases of a unit.
const (
	Pending     = "pending"
	Reconciling = "reconciling"
	Settled     = "settled"
	Error       = "error"
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

// lostOn says whether u's machine agent is lost: nothing runs there until
// it is back, and the unit does not count against the fixed point.
func lostOn(st *model.State, u *model.Unit) bool {
	m := st.Machines[u.Machine]
	return m != nil && m.Lost
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

// applyingSummary is status's first line while `up` applies.
const applyingSummary = "applying environment"

// LostMachine is a machine whose agent is lost, with the units that wait
// on it: nothing runs there until the agent is back, so the environment
// can reach its fixed point only over its other units.
type LostMachine struct {
	Machine string `json:"machine"`
	// Units are the units placed on the machine, by name (in a Summary
	// the first SummaryLimit; MoreUnits counts the others).
	Units     []string `json:"units"`
	MoreUnits int      `json:"more_units,omitempty"`
}

// UnreachableNode is a control-plane node that stopped answering the
// leader, and when it last did (as the leader saw it): status shows it
// under its first line, since the cluster has one failure fewer to spare.
type UnreachableNode struct {
	ID       string    `json:"id"`
	LastSeen time.Time `json:"last_seen"`
}

// UnreachableNodes lists nodes (id to when each last answered) by id.
func UnreachableNodes(nodes map[string]time.Time) []UnreachableNode {
	if len(nodes) == 0 {
		return nil
	}
	out := make([]UnreachableNode, 0, len(nodes))
	for id, t := range nodes {
		out = append(out, UnreachableNode{ID: id, LastSeen: t})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// firstLine is status's first line, and a Summary's. Converged is never
// said plainly when units are blocked or wait on a lost machine:
// "converged at index 9; 3 blocked", "converged over 5 of 7 units at
// index 9; machine m1 lost"; before the fixed point blocked units are
// counted too ("2 of 7 units pending, 1 error, 1 blocked").
func firstLine(st *model.State, counts PhaseCounts) string {
	total := counts.Units
	if !counts.converged() {
		var parts []string
		if n := counts.Pending + counts.Reconciling; n > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d units pending", n, total))
		}
		if n := counts.Error; n > 0 {
			parts = append(parts, fmt.Sprintf("%d error", n))
		}
		if n := counts.Blocked; n > 0 {
			parts = append(parts, fmt.Sprintf("%d blocked", n))
		}
		return strings.Join(parts, ", ")
	}
	out := fmt.Sprintf("converged at index %d", st.Index)
	if n := counts.Lost; n > 0 {
		// The machines whose loss holds units back: a lost machine with
		// nothing on it (one a join token registered and no agent ever
		// ran on) holds nothing.
		held := map[string]bool{}
		for _, u := range st.Units {
			if lostOn(st, u) {
				held[u.Machine] = true
			}
		}
		var lost []string
		for name := range held {
			lost = append(lost, name)
		}
		sort.Strings(lost)
		word := "machine"
		if len(lost) > 1 {
			word = "machines"
		}
		out = fmt.Sprintf("converged over %d of %d units at index %d; %s %s lost", total-n, total, st.Index, word, strings.Join(lost, ", "))
	}
	if n := counts.Blocked; n > 0 {
		out += fmt.Sprintf("; %d blocked", n)
	}
	return out
}

// briefByName orders units by name, as model.UnitLess does.
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
