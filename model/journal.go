package model

// Touched is what one applied command changed, as far as anyone's universe
// goes. The engine reads it to re-hash only the universes that can see a
// change instead of all of them.
type Touched struct {
	Index uint64
	// All means anything may have changed (an operator change, a machine,
	// a removal): readers start over.
	All bool
	// Units had their own record change: reconciled, error, status.
	Units []string
	// Settings lists the relation bags of units that changed: every unit
	// that sees them has a new universe.
	Settings []UnitBag
	// Apps lists relations whose application bags changed.
	Apps []int
	// LeaderData lists services whose leader data changed.
	LeaderData []string
	// Config lists services whose config changed: every unit of theirs
	// sees it, nobody else does.
	Config []string
	// Storage lists units whose storage instances changed (storage-add):
	// each one's own universe shows them.
	Storage []string
	// Secrets lists the units and services whose secrets changed (an
	// owner, a grantee, a consumer): every unit that is one, or is of
	// one, sees it.
	Secrets []string
	// Waves says an operator change started new waves: every unit's
	// wave is 0 again, so queued units may run sooner than they could.
	Waves bool
	// Actions says an operation was queued, started or finished: agents
	// may have an action to take, and waiters an answer.
	Actions bool
}

// UnitBag names one unit's settings in one relation.
type UnitBag struct {
	Unit     string
	Relation int
}

// journalSize bounds the changes remembered; a reader further behind
// starts over.
const journalSize = 4096

// journal is derived, not replicated: a restored or restarted state has an
// empty one and readers start over.
type journal struct {
	init bool
	// from is the index after which every change is recorded.
	from    uint64
	entries []Touched
}

func (s *State) record(t *Touched) {
	if !s.journal.init {
		s.journal = journal{init: true, from: t.Index - 1}
	}
	s.journal.entries = append(s.journal.entries, *t)
	// Trim in halves, not by one: copying the whole journal on every
	// entry cost every applied result ~80 ms once it was full.
	if n := len(s.journal.entries); n > 2*journalSize {
		s.journal.from = s.journal.entries[n-journalSize-1].Index
		s.journal.entries = append([]Touched(nil), s.journal.entries[n-journalSize:]...)
	}
}

// ChangesSince returns what changed after index, and false when the
// journal does not reach back that far (or was lost to a restart or
// restore): then the caller must assume everything changed.
func (s *State) ChangesSince(index uint64) ([]Touched, bool) {
	if !s.journal.init {
		return nil, index == s.Index
	}
	if index < s.journal.from {
		return nil, false
	}
	es := s.journal.entries
	i := len(es)
	for i > 0 && es[i-1].Index > index {
		i--
	}
	return es[i:], true
}
