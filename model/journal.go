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

// Journal remembers what the last applied commands touched (each
// Response's Touched), so that a reader following the state re-hashes
// only what can see a change. It is derived, not replicated: whoever
// applies commands to a State keeps it beside the state (the FSM, one
// per environment), and a state restored or replaced starts a new one.
type Journal struct {
	// from is the index after which every change is recorded.
	from    uint64
	entries []Touched
}

// NewJournal starts a journal of a state at index: changes after it are
// recorded.
func NewJournal(index uint64) *Journal { return &Journal{from: index} }

// Record adds what the command at t.Index touched.
func (j *Journal) Record(t *Touched) {
	if t == nil {
		return
	}
	j.entries = append(j.entries, *t)
	// Trim in halves, not by one: copying the whole journal on every
	// entry would cost every applied result as much as the journal.
	if n := len(j.entries); n > 2*journalSize {
		j.from = j.entries[n-journalSize-1].Index
		j.entries = append([]Touched(nil), j.entries[n-journalSize:]...)
	}
}

// ChangesSince returns what changed after index, and false when the
// journal does not reach back that far (or is nil: the state's history is
// unknown): then the caller must assume everything changed.
func (j *Journal) ChangesSince(index uint64) ([]Touched, bool) {
	if j == nil || index < j.from {
		return nil, false
	}
	es := j.entries
	i := len(es)
	for i > 0 && es[i-1].Index > index {
		i--
	}
	return es[i:], true
}
