package ledger

import (
	"sync"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// Staleness is, for each unit, the hash of the universe it would see at
// index (its View) and how far that view is behind the state. It holds no
// universe but the last reconciled one of each often-run unit, and runs no
// goroutine. It is written only by its Ledger, under the store's read
// lock and the ledger's lock, so that views and state agree; others read
// it (View, ViewOf, LastOf) under the same read lock. Its own lock,
// taken by each method and released before it returns, orders those
// reads against the writes. What moved it says in a staleNote, which the
// ledger consumes.
type Staleness struct {
	mu    sync.Mutex
	index uint64
	// views is nil when none is built: the next refresh builds them all.
	views map[string]*View
	// outdated holds the units whose view is behind the state, and how.
	outdated map[string]ViewState
	// last is the universe each often-run unit last reconciled, to name
	// the keys that keep changing should it diverge.
	last map[string]*charmapi.Universe
}

func newStaleness() *Staleness {
	return &Staleness{views: map[string]*View{}, outdated: map[string]ViewState{}, last: map[string]*charmapi.Universe{}}
}

// staleNote is what a refresh found moved since the index.
type staleNote struct {
	// rebuild says the journal cannot say what moved (a restart, a
	// restore, an operator change) or no view is built: every view must
	// be rebuilt (rebuildAll).
	rebuild bool
	// self are the units whose own record moved (wave, error, life).
	self []string
	// lacking are those of self whose view now lacks their own writes:
	// their hash holds, but they may need a run.
	lacking []string
	// gone are the units that saw a change and no longer exist, with
	// the view they had (nil if none); their views are dropped.
	gone []unitView
	// stale are the units that see a change: their hash is unknown
	// until rebuilt. The view is the one they had (nil if none).
	stale []unitView
	// waves says an operator change started the waves over.
	waves bool
	// actions says an operation was queued, started or finished.
	actions bool
}

type unitView struct {
	name string
	view *View
}

// View is unit name's view, nil if it has none. A view is never
// changed once installed, so the caller may keep it.
func (s *Staleness) View(name string) *View {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.views[name]
}

// ViewOf is unit name's view and how far it is behind the state.
func (s *Staleness) ViewOf(name string) (*View, ViewState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.views[name], s.outdated[name]
}

// behind says how far unit name's view is behind the state.
func (s *Staleness) behind(name string) ViewState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.outdated[name]
}

// built says whether views are kept; after forget none is until the next
// refresh rebuilds them all.
func (s *Staleness) built() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.views != nil
}

// forget drops every view and last universe.
func (s *Staleness) forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.views, s.index = nil, 0
	s.last = map[string]*charmapi.Universe{}
}

// reset empties the views for a rebuild of every one of units units.
func (s *Staleness) reset(units int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.views = make(map[string]*View, units)
	s.outdated = map[string]ViewState{}
}

// install makes v unit name's view, current, and returns the one it
// replaces.
func (s *Staleness) install(name string, v *View) (old *View) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old = s.views[name]
	s.views[name] = v
	delete(s.outdated, name)
	return old
}

// drop removes unit name's view and returns it.
func (s *Staleness) drop(name string) (old *View) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropLocked(name)
}

func (s *Staleness) dropLocked(name string) (old *View) {
	old = s.views[name]
	delete(s.views, name)
	delete(s.outdated, name)
	return old
}

// LastOf is the universe unit name last reconciled, if kept.
func (s *Staleness) LastOf(name string) *charmapi.Universe {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last[name]
}

// keepLast keeps uni as the universe unit name last reconciled.
func (s *Staleness) keepLast(name string, uni *charmapi.Universe) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last[name] = uni
}

// pruneLast forgets the last universes of units without a view.
func (s *Staleness) pruneLast() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.last {
		if _, ok := s.views[name]; !ok {
			delete(s.last, name)
		}
	}
}

// refresh reads st's journal (changes) since the index, marks the views
// that fall behind, and says what moved; moved is false when st is at the
// index already. The caller acts on the note and then calls caughtUp.
// Only the universes that can see what changed are marked.
func (s *Staleness) refresh(st *model.State, changesSince func(uint64) ([]model.Touched, bool)) (n staleNote, moved bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.Index == s.index && s.views != nil {
		return n, false
	}
	var changes []model.Touched
	ok := false
	if changesSince != nil {
		changes, ok = changesSince(s.index)
	}
	for _, t := range changes {
		ok = ok && !t.All
	}
	if !ok || s.views == nil {
		n.rebuild = true
		return n, true
	}
	affected, self := map[string]bool{}, map[string]bool{}
	for _, t := range changes {
		for _, ub := range t.Settings {
			Watchers(st, ub.Unit, ub.Relation, affected)
		}
		for _, id := range t.Apps {
			if r := st.Relations[id]; r != nil {
				for _, e := range r.Endpoints {
					for _, u := range st.UnitsOf(e.Service) {
						affected[u.Name] = true
					}
				}
			}
		}
		for _, svc := range t.LeaderData {
			for _, u := range st.UnitsOf(svc) {
				affected[u.Name] = true
			}
		}
		for _, svc := range t.Config {
			for _, u := range st.UnitsOf(svc) {
				affected[u.Name] = true
			}
		}
		for _, name := range t.Storage {
			affected[name] = true
		}
		for _, who := range t.Secrets {
			secretWatchers(st, who, affected)
		}
		n.waves = n.waves || t.Waves
		n.actions = n.actions || t.Actions
		for _, name := range t.Units {
			self[name] = true
		}
	}
	// A unit's own writes do not change its hash, so they do not make it
	// stale; but the universe it is handed next must carry them (its
	// local settings, its state).
	for name := range self {
		n.self = append(n.self, name)
		if !affected[name] && s.outdated[name] != ViewHashUnknown {
			s.outdated[name] = ViewLacksOwnWrites
			n.lacking = append(n.lacking, name)
		}
	}
	// Everyone who sees a change is stale; their universes are rebuilt
	// and hashed only when they are handed out, once however many
	// changes landed meanwhile.
	for name := range affected {
		if _, ok := st.Units[name]; !ok {
			n.gone = append(n.gone, unitView{name, s.dropLocked(name)})
			continue
		}
		s.outdated[name] = ViewHashUnknown
		n.stale = append(n.stale, unitView{name, s.views[name]})
	}
	return n, true
}

// caughtUp records that the views stand for st's index.
func (s *Staleness) caughtUp(st *model.State) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.index = st.Index
}

// Watchers adds to set the units whose universe shows unit's settings in
// relation rel: the other side's members (its peers for a peer relation).
func Watchers(st *model.State, unit string, rel int, set map[string]bool) {
	u, r := st.Units[unit], st.Relations[rel]
	if u == nil || r == nil {
		return
	}
	remote, ok := r.Remote(u.Service)
	if !ok {
		return
	}
	for _, o := range st.UnitsOf(remote.Service) {
		if o.Name != unit && (r.Scope != model.Container || st.Sees(o, u, r)) {
			set[o.Name] = true
		}
	}
}

// secretWatchers adds to set the units a secret change named in a
// journal entry (model.Touched.Secrets) reaches: the unit, or every unit
// of the service.
func secretWatchers(st *model.State, who string, set map[string]bool) {
	if _, ok := st.Units[who]; ok {
		set[who] = true
		return
	}
	for _, u := range st.UnitsOf(who) {
		set[u.Name] = true
	}
}
