package ledger

import (
	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// AheadJob is a unit whose universe a pass builds ahead.
type AheadJob struct {
	Name string
	Hash string // the view's, "" if it must be hashed
}

// Prebuilt is a unit's universe built ahead of its claim, outside the
// ledger's lock: what pick and hand would build, so that they only look
// it up.
type Prebuilt struct {
	Uni  *charmapi.Universe
	Seen *model.Seen
	// Hash is the universe's hash: the view's, or computed by the
	// builder (Rehashed, Hashed bytes) if the view's was unknown.
	Hash     string
	Rehashed bool
	Hashed   int
	// Run is schedule.RunUniverse of Uni with Hash: what a run is given;
	// RunJSON is Run encoded, nil if it could not be (the answer then
	// encodes it, and reports why).
	Run     charmapi.Universe
	RunJSON []byte
}

// BuiltAhead is a pass's build-ahead, handed to its claims: the
// universes built, by unit, and those the claims took, whose run
// universes hand then takes (runUniverse). It belongs to the pass; a nil
// BuiltAhead holds nothing.
type BuiltAhead struct {
	built, taken map[string]*Prebuilt
}

// NewBuiltAhead is a pass's build-ahead of the universes built, by unit.
func NewBuiltAhead(built map[string]*Prebuilt) *BuiltAhead { return &BuiltAhead{built: built} }

// take returns the universe built ahead for unit name, once, if it was
// built with the view's hash (hash, "" for a view to rebuild).
func (a *BuiltAhead) take(name, hash string) *Prebuilt {
	if a == nil {
		return nil
	}
	p := a.built[name]
	if p == nil || p.Rehashed != (hash == "") || (hash != "" && p.Hash != hash) {
		return nil
	}
	delete(a.built, name)
	if a.taken == nil {
		a.taken = map[string]*Prebuilt{}
	}
	a.taken[name] = p
	return p
}

// runUniverse returns the run universe built ahead for unit name from
// uni with hash, and its encoding, once, if uni is the one take returned.
func (a *BuiltAhead) runUniverse(name string, uni *charmapi.Universe, hash string) (*charmapi.Universe, []byte) {
	if a == nil {
		return nil, nil
	}
	p := a.taken[name]
	if p == nil || p.Uni != uni || p.Hash != hash {
		return nil, nil
	}
	delete(a.taken, name)
	return &p.Run, p.RunJSON
}

// takeAhead is ahead.take, counted. Called with mu.
func (l *Ledger) takeAhead(ahead *BuiltAhead, name, hash string) *Prebuilt {
	p := ahead.take(name, hash)
	if p != nil {
		l.counts.prebuilt.Add(1)
	}
	return p
}

// PlanPass chooses, under mu, what each of n looks (look says the
// machine and most units of the i-th) would claim now, and adds each
// unit to build ahead to add, up to about bound; it returns how many
// looks, from the first, fit (at least one), and the wakes its refresh
// owes.
func (l *Ledger) PlanPass(st *model.State, n int, look func(i int) (machine string, max int), add func(AheadJob), bound int) (served int, w *Owed) {
	l.lock()
	l.refreshLocked(st)
	now := l.opts.Now()
	served, jobs := n, 0
	for li := range n {
		if li > 0 && jobs >= bound {
			served = li
			break
		}
		machine, max := look(li)
		_, run := l.queue.ChooseInOrder(st, machine, now, l.entry)
		i := 0
		for name := range run {
			if max > 0 && i >= max {
				break
			}
			i++
			v, vs := l.stale.ViewOf(name)
			if v == nil || l.claims[name] != nil {
				continue
			}
			j := AheadJob{Name: name}
			if vs == ViewCurrent {
				j.Hash = v.Hash
			}
			jobs++
			add(j)
		}
	}
	return served, l.unlock()
}
