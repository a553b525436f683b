package engine

import (
	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/events"
	"github.com/fixpoint/fixpoint/model"
)

// legacyEvents derives the old-hook events between what a unit last
// reconciled and the universe it is about to get.
func legacyEvents(unit string, before, after *model.Seen, uni *charmapi.Universe) []charmapi.Event {
	rels := map[int]events.RelInfo{}
	for _, r := range uni.Relations {
		rels[r.ID] = events.RelInfo{RemoteApp: r.RemoteService, Peer: r.Role == string(model.Peer)}
	}
	lookup := func(id int) (events.RelInfo, bool) {
		info, ok := rels[id]
		return info, ok
	}
	evs := events.Derive(events.FromSeen(unit, before, lookup), events.FromSeen(unit, after, lookup))
	if evs == nil {
		evs = []charmapi.Event{}
	}
	return evs
}
