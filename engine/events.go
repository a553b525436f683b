package engine

import (
	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/events"
	"github.com/fixpoint/fixpoint/model"
)

// legacyEvents derives the old-hook events between what a unit last
// reconciled and the universe it is about to get.
//
// Relations are looked up in the state, which still holds the ones that
// are dying: a relation the unit is leaving is no longer in its universe,
// yet whether it was a peer relation decides if it gets relation-broken.
func legacyEvents(st *model.State, unit string, before, after *model.Seen) []charmapi.Event {
	svc := model.ServiceOf(unit)
	lookup := func(id int) (events.RelInfo, bool) {
		r, ok := st.Relations[id]
		if !ok {
			return events.RelInfo{}, false
		}
		ep, _ := r.Endpoint(svc)
		remote, _ := r.Remote(svc)
		return events.RelInfo{RemoteApp: remote.Service, Peer: ep.Role == model.Peer}, true
	}
	evs := events.Derive(events.FromSeen(unit, before, lookup), events.FromSeen(unit, after, lookup))
	if evs == nil {
		evs = []charmapi.Event{}
	}
	return evs
}
