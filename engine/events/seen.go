package events

import (
	"strconv"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// RelInfo is what the state knows about a relation a Seen names: Seen keeps
// only revisions, not who is on the other side.
type RelInfo struct {
	// RemoteApp is the remote service (the unit's own for a peer relation).
	RemoteApp string
	// Peer marks a peer relation.
	Peer bool
	// Revision tells a member's settings revision in the relation now
	// (0 for none); ok is false for a unit that is gone. A Seen keeps only
	// a mark per relation (model.SeenRelation.At), so whether a member
	// moved is read against the state.
	Revision func(unit string) (rev uint64, ok bool)
}

// DeriveSeen returns the events that lead a unit from the Seen it last
// reconciled (before; nil if it never did) to the one it is about to get
// (after), both read against the state lookup describes, the one after was
// built from (see FromSeen). It is what a hand-out runs for every unit, so
// it costs what changed: a relation both Seens saw alike (same members,
// mark and app revision) is read once, without its members, and shared by
// both snapshots, which Derive skips as unmoved. The events are those of
// Derive(FromSeen(before), FromSeen(after)).
func DeriveSeen(unit string, before, after *model.Seen, lookup func(id int) (RelInfo, bool)) []charmapi.Event {
	if before == nil || after == nil {
		return Derive(FromSeen(unit, before, lookup), FromSeen(unit, after, lookup))
	}
	b, a := seenHeader(unit, before), seenHeader(unit, after)
	if a.dying() {
		// Teardown departs every member the unit knew: it needs them all.
		return Derive(FromSeen(unit, before, lookup), FromSeen(unit, after, lookup))
	}
	for id, sr := range before.Relations.All() {
		same := after.Relations.Get(id) != nil && *after.Relations.Get(id) == *sr
		// A shared relation's members are never read: the unit is alive
		// in after and the relation alive on both sides, so Derive
		// neither compares nor departs them.
		r := relFromSeen(unit, id, sr, lookup, !same)
		b.Relations[r.Ident()] = r
		if same {
			a.Relations[r.Ident()] = r
		}
	}
	for id, sr := range after.Relations.All() {
		if before.Relations.Get(id) != nil && *before.Relations.Get(id) == *sr {
			continue
		}
		r := relFromSeen(unit, id, sr, lookup, true)
		a.Relations[r.Ident()] = r
	}
	return Derive(b, a)
}

// FromSeen converts what a unit's last successful reconcile saw (the
// replicated model.Seen) into a Snapshot whose tokens are revisions. A nil
// seen means the unit never reconciled. lookup tells the remote service of
// a relation by id and its members' revisions now; when it does not know
// the relation any more (or is nil) the remote service is taken from the
// members' names, and a relation whose remote service is the unit's own is
// a peer relation. Member tokens depend on the revisions lookup gives, so
// the two Seens of one Derive must be read against the same state, the one
// the later Seen was built from (see memberToken).
//
// Every relation in a Seen is alive: a relation the unit saw broken is not
// recorded. Tokens from FromSeen compare only with tokens from FromSeen.
func FromSeen(unit string, seen *model.Seen, lookup func(id int) (RelInfo, bool)) *Snapshot {
	if seen == nil {
		return &Snapshot{Unit: unit}
	}
	s := seenHeader(unit, seen)
	for id, sr := range seen.Relations.All() {
		r := relFromSeen(unit, id, sr, lookup, true)
		s.Relations[r.Ident()] = r
	}
	return s
}

// seenHeader is the Snapshot of seen without its relations (an empty map
// sized for them).
func seenHeader(unit string, seen *model.Seen) *Snapshot {
	s := &Snapshot{
		Unit:       unit,
		Installed:  true,
		Life:       string(seen.Life),
		Charm:      seen.Charm,
		Resources:  seen.Resources,
		Config:     revToken(seen.ConfigRev),
		Address:    seen.Address,
		Leader:     seen.Leader,
		LeaderData: revToken(seen.LeaderRev),
		Relations:  make(map[string]*RelSnap, seen.Relations.Len()),
		Storage:    seen.Storage,
		Boot:       seen.Boot,
	}
	if s.Life == "" {
		s.Life = Alive
	}
	return s
}

// relFromSeen is relation id as sr saw it; withMembers false leaves its
// Members nil (see DeriveSeen).
func relFromSeen(unit string, id int, sr *model.SeenRelation, lookup func(id int) (RelInfo, bool), withMembers bool) *RelSnap {
	// Revision 0 is a bag never written; Juju likewise fires no app-bag
	// hook for version 0 (relation/resolver.go).
	r := &RelSnap{ID: id, Endpoint: sr.Endpoint, Alive: true, App: revToken(sr.App)}
	info, ok := RelInfo{}, false
	if lookup != nil {
		info, ok = lookup(id)
	}
	if ok {
		r.RemoteApp, r.Peer = info.RemoteApp, info.Peer
	} else {
		// Members yields in UnitLess order: the first names the service
		// that sorts first.
		for u := range sr.Members.All() {
			r.RemoteApp = serviceOf(u)
			break
		}
		r.Peer = r.RemoteApp != "" && r.RemoteApp == serviceOf(unit)
	}
	if withMembers {
		r.Members = make(map[string]string, sr.Members.Len())
		for u := range sr.Members.All() {
			r.Members[u] = memberToken(sr, u, info.Revision)
		}
	}
	return r
}

// revToken formats a revision as a token; 0 (never written) is "".
func revToken(rev uint64) string {
	if rev == 0 {
		return ""
	}
	return strconv.FormatUint(rev, 10)
}

// memberToken is member u's token in what sr saw, given its revision now.
// A bag at or below the mark is the one the unit saw: its token is its
// revision, which any Seen that saw the same bag gives too. A bag above the
// mark changed after sr was seen: its token names the mark, so it differs
// from the token of a later Seen that saw the new bag (whose mark is at or
// above it), and a member whose bag stayed put gets one token from both.
// A unit gone from the state can only have departed; its token matters to
// nobody.
func memberToken(sr *model.SeenRelation, u string, revision func(string) (uint64, bool)) string {
	if revision != nil {
		if rev, ok := revision(u); ok && !sr.ChangedSince(rev) {
			return strconv.FormatUint(rev, 10)
		}
	}
	return "after-" + strconv.FormatUint(sr.At, 10)
}
