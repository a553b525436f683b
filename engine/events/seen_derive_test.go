package events

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

// TestDeriveSeenMatchesFromSeen holds DeriveSeen's shortcut (relations both
// Seens saw alike are read once and skipped) to the plain diff of two full
// snapshots, on random pairs of Seens read against one random state:
// relations kept, copied, moved, re-endpointed, added and dropped, members
// of several services, lookups that do not know a relation, dying units
// and first runs.
func TestDeriveSeenMatchesFromSeen(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 2))
	services := []string{"db", "web", "cache"}
	randomMembers := func() model.Members {
		var names []string
		for range rng.IntN(6) {
			names = append(names, fmt.Sprintf("%s/%d", services[rng.IntN(len(services))], rng.IntN(5)))
		}
		return model.NewMembers(names)
	}
	randomRel := func() *model.SeenRelation {
		return &model.SeenRelation{
			Endpoint: []string{"db", "peers", "cache"}[rng.IntN(3)],
			Members:  randomMembers(),
			At:       uint64(rng.IntN(12)),
			App:      uint64(rng.IntN(3)),
		}
	}
	randomSeen := func() *model.Seen {
		s := &model.Seen{
			Life:  []model.Life{model.Alive, model.Alive, model.Alive, model.Dying, ""}[rng.IntN(5)],
			Charm: []string{"c1", "c2"}[rng.IntN(2)], ConfigRev: uint64(rng.IntN(2)),
			Leader: rng.IntN(2) == 0, LeaderRev: uint64(rng.IntN(2)),
			Address: []string{"", "10.0.0.1", "10.0.0.2"}[rng.IntN(3)],
		}
		rels := map[int]*model.SeenRelation{}
		for id := range 4 {
			if rng.IntN(3) > 0 {
				rels[id] = randomRel()
			}
		}
		s.Relations = model.NewSeenRelations(rels)
		return s
	}
	// evolve returns a later Seen: each relation kept as is (the same
	// pointer or an equal copy), changed in one field, dropped, or new.
	evolve := func(before *model.Seen) *model.Seen {
		after := randomSeen()
		rels := map[int]*model.SeenRelation{}
		for id := range 5 {
			sr := before.Relations.Get(id)
			switch op := rng.IntN(8); {
			case sr == nil && op < 3:
				rels[id] = randomRel()
			case sr == nil:
			case op < 2:
				rels[id] = sr
			case op < 4:
				c := *sr
				rels[id] = &c
			case op == 4:
				c := *sr
				c.At += uint64(rng.IntN(3))
				c.App += uint64(rng.IntN(2))
				rels[id] = &c
			case op == 5:
				c := *sr
				c.Members = randomMembers()
				rels[id] = &c
			case op == 6:
				c := *sr
				c.Endpoint = "other"
				rels[id] = &c
			}
		}
		if rng.IntN(10) == 0 {
			rels[1] = nil
		}
		after.Relations = model.NewSeenRelations(rels)
		return after
	}
	for round := range 5000 {
		// The state: every unit's revision per relation, some units gone,
		// some relations unknown.
		revs := map[int]map[string]uint64{}
		known := map[int]bool{}
		for id := range 5 {
			known[id] = rng.IntN(4) > 0
			revs[id] = map[string]uint64{}
			for _, svc := range services {
				for n := range 5 {
					if rng.IntN(6) > 0 {
						revs[id][fmt.Sprintf("%s/%d", svc, n)] = uint64(rng.IntN(15))
					}
				}
			}
		}
		lookup := func(id int) (RelInfo, bool) {
			if !known[id] {
				return RelInfo{}, false
			}
			return RelInfo{RemoteApp: services[id%len(services)], Peer: id == 2, Revision: func(u string) (uint64, bool) {
				r, ok := revs[id][u]
				return r, ok
			}}, true
		}
		var before, after *model.Seen
		if rng.IntN(8) > 0 {
			before = randomSeen()
		}
		if before != nil && rng.IntN(4) > 0 {
			after = evolve(before)
		} else if rng.IntN(10) > 0 {
			after = randomSeen()
		}
		want := lines(Derive(FromSeen("web/0", before, lookup), FromSeen("web/0", after, lookup)))
		got := lines(DeriveSeen("web/0", before, after, lookup))
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: before %+v after %+v:\nDeriveSeen %q\nFromSeen   %q", round, before, after, got, want)
		}
	}
}
