package events

import (
	"slices"
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

// TestStorageEventsInJujusOrder checks the storage hooks' places: attached
// before install for the storage a unit is created with, first of the
// steady hooks for an instance added later, detaching after the relations
// are broken and before stop for a dying unit (only what it had attached),
// none for a unit that never installed.
func TestStorageEventsInJujusOrder(t *testing.T) {
	withStorage := func(s *Snapshot, ids ...string) *Snapshot {
		return s.set(func(c *Snapshot) { c.Storage = ids })
	}
	installed := withStorage(snap().with("db", 3, "db", "db/0=1"), "data/0")
	for _, c := range []struct {
		name          string
		before, after *Snapshot
		want          []string
	}{
		{"first run", nil, withStorage(snap(), "data/0", "logs/1"),
			[]string{"data-storage-attached data/0", "logs-storage-attached logs/1", "install", "leader-settings-changed", "config-changed", "start"}},
		{"storage-add", installed, withStorage(installed.set(func(c *Snapshot) { c.Config = "2" }), "data/0", "logs/4"),
			[]string{"logs-storage-attached logs/4", "config-changed"}},
		{"nothing new", installed, installed.clone(), []string{}},
		{"dying", withStorage(installed, "data/0", "logs/4"), withStorage(installed.set(func(c *Snapshot) { c.Life = Dying; c.Relations = map[string]*RelSnap{} }), "data/0", "logs/4", "logs/5"),
			[]string{"db-relation-departed db:3 db/0", "db-relation-broken db:3", "data-storage-detaching data/0", "logs-storage-detaching logs/4", "stop", "remove"}},
		{"dying before install", nil, withStorage(snap().set(func(c *Snapshot) { c.Life = Dying }), "data/0"), []string{}},
	} {
		got := lines(Derive(c.before, c.after))
		if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	// The same from the replicated Seen records, as a hand-out derives.
	before := &model.Seen{Life: model.Alive, Charm: "c", Storage: []string{"data/0"}}
	after := &model.Seen{Life: model.Alive, Charm: "c", Storage: []string{"data/0", "data/7"}}
	if got := lines(DeriveSeen("web/0", before, after, nil)); !slices.Equal(got, []string{"data-storage-attached data/7"}) {
		t.Errorf("DeriveSeen: %q", got)
	}
}
