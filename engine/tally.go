package engine

import "sync"

// tally keeps what a status summary counts, unit by unit, between
// summaries, so that a summary recounts the units whose phase may have
// moved since the last one rather than every unit: a summary's cost under
// status's lock follows what changed, not the environment's size.
//
// A unit's phase moves with its own record and its view (marked as the
// ledger learns of them: recountInbox) and with its claim, whose lease
// can end with no event at all: claimed units are recounted at every
// summary. Anything that may move every unit (a rebuild of every view, a
// machine lost) recounts all (statusState.recountLocked, recount.go).
type tally struct {
	// all says every unit is recounted at the next summary.
	all bool
	// busy says the last count of every unit found most units out of
	// settled (a first convergence): the next summaries count every
	// unit as they walk, keeping no count per unit, since most units
	// move between them anyway.
	busy bool
	// dirty are the units to recount besides the claimed ones.
	dirty map[string]struct{}
	// claimed are the units claimed at the last summary.
	claimed map[string]struct{}
	// units is what each unit was counted as. A unit's service is its
	// record's: a unit never changes service, and one removed is
	// recounted with every other (a removal rebuilds every view).
	units    map[string]unitTally
	phases   PhaseCounts
	services map[string]*PhaseCounts
	// The units a summary's lists are chosen from: blocked on a machine
	// that is not lost, out of settled (lost ones too; those in error
	// among them), and on a lost machine.
	blocked, out, lost map[string]struct{}
	// recounted counts units recounted, for the tests that pin what a
	// summary costs.
	recounted int64
}

// unitTally is what one unit counts as in a summary, in a byte: a
// recount of every unit writes one per unit, and a first convergence of
// 100,000 units recounts all at every summary.
type unitTally uint8

const (
	tallyLost unitTally = 1 << iota
	tallyBlocked
	tallyPhase // the phase's index in tallyPhases, from here up
)

// tallyPhases are the phases a unitTally names, by index.
var tallyPhases = [...]string{Pending, Reconciling, Settled, Error}

func newUnitTally(phase string, lost, blocked bool) unitTally {
	n := unitTally(0)
	for i, p := range tallyPhases {
		if p == phase {
			n = unitTally(i) * tallyPhase
		}
	}
	if lost {
		n |= tallyLost
	}
	if blocked {
		n |= tallyBlocked
	}
	return n
}

func (n unitTally) phase() string { return tallyPhases[n/tallyPhase] }

// count counts a unit that counts as n in p d times.
func (n unitTally) count(p *PhaseCounts, d int) {
	p.count(n.phase(), n&tallyLost != 0, n&tallyBlocked != 0, d)
}

// recountInbox holds the units whose phase may have moved, as the ledger
// learns of them (their record or their view moved, ledger.Owed.Recount),
// waiting for the next summary to take them into its tally. Its lock is
// a leaf: a change of the ledger marks units without waiting for a
// summary's walk.
type recountInbox struct {
	mu    sync.Mutex
	dirty map[string]struct{}
	all   bool
	// n counts marks: a summary that took in fewer is out of date.
	n uint64
	// limit is the dirty units past which all are recounted: recounting
	// all is as cheap by then, and the set stays small.
	limit int
}

// mark has the next summary recount the units names.
func (m *recountInbox) mark(names ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	if m.all {
		return
	}
	if m.dirty == nil {
		m.dirty = map[string]struct{}{}
	}
	for _, name := range names {
		m.dirty[name] = struct{}{}
	}
	if len(m.dirty) > m.limit {
		m.all, m.dirty = true, nil
	}
}

// markAll has the next summary recount every unit.
func (m *recountInbox) markAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	m.all, m.dirty = true, nil
}

// seq is the count of marks so far.
func (m *recountInbox) seq() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

// takeIn moves the marks into the tally, and bounds the next ones by
// the units it counts.
func (t *tally) takeIn(m *recountInbox) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.limit = len(t.units)/2 + 16
	if m.all {
		t.recountAll()
	} else if !t.all {
		if t.dirty == nil {
			t.dirty = m.dirty
		} else {
			for name := range m.dirty {
				t.dirty[name] = struct{}{}
			}
		}
	}
	m.all, m.dirty = false, nil
}

// recountAll has the next summary recount every unit.
func (t *tally) recountAll() {
	t.all = true
	t.dirty = nil
}

// start empties the tally for a recount of every unit. The maps are
// kept: a first convergence recounts all at every summary, and new maps
// each time would be garbage in proportion to the units.
func (t *tally) start(units int) {
	if t.units == nil {
		t.units = make(map[string]unitTally, units)
		t.services = map[string]*PhaseCounts{}
		t.blocked, t.out, t.lost = map[string]struct{}{}, map[string]struct{}{}, map[string]struct{}{}
	}
	clear(t.units)
	clear(t.services)
	clear(t.blocked)
	clear(t.out)
	clear(t.lost)
	t.phases = PhaseCounts{}
	t.all = false
}
