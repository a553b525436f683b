package events

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

// TestCompactSeenMatchesRevisions holds the compact Seen (members plus one
// mark per relation) to the events that per-member revisions gave: a
// relation's members join, write and leave at random, units take Seens at
// random moments, and a Seen taken earlier is diffed against one taken
// now both ways.
func TestCompactSeenMatchesRevisions(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 16))
	type taken struct {
		compact *model.Seen
		revs    map[string]uint64 // what the old form recorded
	}
	for round := 0; round < 200; round++ {
		index := uint64(0)
		revs := map[string]uint64{} // members now and their bags' revisions
		bags := map[string]uint64{} // every unit's bag revision
		var history []taken
		take := func() taken {
			names := make([]string, 0, len(revs))
			var at uint64
			for u, r := range revs {
				names = append(names, u)
				at = max(at, r)
			}
			sr := &model.SeenRelation{Endpoint: "db", Members: model.NewMembers(names), At: at}
			return taken{
				compact: &model.Seen{Life: model.Alive, Relations: model.NewSeenRelations(map[int]*model.SeenRelation{3: sr})},
				revs:    mapsClone(revs),
			}
		}
		lookup := func(int) (RelInfo, bool) {
			return RelInfo{RemoteApp: "db", Revision: func(u string) (uint64, bool) { r, ok := revs[u]; return r, ok }}, true
		}
		for step := 0; step < 40; step++ {
			index++
			u := fmt.Sprintf("db/%d", rng.IntN(8))
			// A unit's bag keeps its revision while the unit is out of
			// the relation (the model drops bags only with the relation,
			// and never reuses a unit's name), so revisions only grow.
			switch op := rng.IntN(6); {
			case op < 3:
				bags[u] = index // a write, seen only while a member
				if _, ok := revs[u]; ok {
					revs[u] = index
				}
			case op == 3:
				revs[u] = bags[u] // joins (or stays)
			case op == 4:
				bags[u] = index // joins having written
				revs[u] = index
			default:
				delete(revs, u) // leaves
			}
			if rng.IntN(3) == 0 {
				history = append(history, take())
			}
			if len(history) == 0 {
				continue
			}
			before, now := history[rng.IntN(len(history))], take()
			want := lines(Derive(oldSnapshot(before.revs), oldSnapshot(now.revs)))
			got := lines(Derive(FromSeen("web/0", before.compact, lookup), FromSeen("web/0", now.compact, lookup)))
			if !slices.Equal(got, want) {
				t.Fatalf("round %d step %d: compact Seen derived %v; per-member revisions %v", round, step, got, want)
			}
		}
	}
}

// oldSnapshot is what FromSeen made of a Seen that kept every member's
// revision.
func oldSnapshot(revs map[string]uint64) *Snapshot {
	r := &RelSnap{ID: 3, Endpoint: "db", RemoteApp: "db", Alive: true, Members: map[string]string{}}
	for u, rev := range revs {
		r.Members[u] = strconv.FormatUint(rev, 10)
	}
	return &Snapshot{Unit: "web/0", Installed: true, Life: Alive, Relations: map[string]*RelSnap{r.Ident(): r}}
}

func mapsClone(m map[string]uint64) map[string]uint64 {
	out := make(map[string]uint64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
