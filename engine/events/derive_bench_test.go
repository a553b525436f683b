package events

import (
	"fmt"
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

// benchWorld is a unit web/0 in two relations of members members each, a
// provides relation to db (id 1) and its peer relation (id 2), with every
// member's settings revision: the shape a hand-out derives events in.
type benchWorld struct {
	revs map[int]map[string]uint64
}

func newBenchWorld(members int) *benchWorld {
	w := &benchWorld{revs: map[int]map[string]uint64{1: {}, 2: {}}}
	for i := 0; i < members; i++ {
		w.revs[1][fmt.Sprintf("db/%d", i)] = uint64(1000 + i)
		w.revs[2][fmt.Sprintf("web/%d", i+1)] = uint64(2000 + i)
	}
	return w
}

func (w *benchWorld) lookup(id int) (RelInfo, bool) {
	revs, ok := w.revs[id]
	if !ok {
		return RelInfo{}, false
	}
	remote := map[int]string{1: "db", 2: "web"}[id]
	return RelInfo{RemoteApp: remote, Peer: id == 2, Revision: func(u string) (uint64, bool) {
		r, ok := revs[u]
		return r, ok
	}}, true
}

// seen is the Seen a unit takes of the world now (a fresh value each call,
// as a hand-out builds one).
func (w *benchWorld) seen() *model.Seen {
	s := &model.Seen{Life: model.Alive, Charm: "c1", ConfigRev: 7, LeaderRev: 9, Address: "10.0.0.1"}
	for id, endpoint := range map[int]string{1: "db", 2: "peers"} {
		names := make([]string, 0, len(w.revs[id]))
		var at uint64
		for u, r := range w.revs[id] {
			names = append(names, u)
			at = max(at, r)
		}
		s.Relations.Set(id, model.SeenRelation{Endpoint: endpoint, Members: model.NewMembers(names), At: at, App: 3})
	}
	return s
}

// BenchmarkDerive is the events part of a hand-out (engine/schedule.Events)
// for a unit in two relations of 100 members: nothing changed since its
// last reconcile, one member's settings moved, and its first run.
func BenchmarkDerive(b *testing.B) {
	const members = 100
	w := newBenchWorld(members)
	same := w.seen()
	moved := newBenchWorld(members)
	movedBefore := moved.seen()
	moved.revs[1]["db/42"] = 5000
	cases := []struct {
		name          string
		w             *benchWorld
		before, after *model.Seen
		want          int
	}{
		{"unchanged", w, same, w.seen(), 0},
		{"one-moved", moved, movedBefore, moved.seen(), 1},
		// install, two relation-created, leader-settings-changed,
		// config-changed, start, two app-bag changed, then joined and
		// changed for every member of both relations.
		{"first-run", w, nil, w.seen(), 6 + 2 + 4*members},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if evs := DeriveSeen("web/0", c.before, c.after, c.w.lookup); len(evs) != c.want {
					b.Fatalf("%d events, want %d", len(evs), c.want)
				}
			}
		})
	}
}
