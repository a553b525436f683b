package ledger

import (
	"maps"
	"slices"
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

// Staleness marks, from the journal, exactly who sees a change: a unit's
// own writes leave its hash standing but its view lacking them, the other
// side of the relation goes stale, and a unit that sees nothing of it
// stays current; a state at the index moves nothing, and after forget the
// next refresh rebuilds every view.
func TestStalenessMarksWhoSeesAChange(t *testing.T) {
	w := newWorld(t)
	w.shop(2, 2)
	sn := newStaleness()
	st := w.st
	n, moved := sn.refresh(st, w.changes)
	if !moved || !n.rebuild {
		t.Fatalf("first refresh: moved %v, note %+v; want a rebuild of every view", moved, n)
	}
	sn.reset(len(st.Units))
	for name := range st.Units {
		_, _, h, _ := standInBuildHashed(st, name)
		sn.install(name, &View{Hash: h, Machine: st.Units[name].Machine})
	}
	sn.caughtUp(st)
	w.apply(&model.Command{Op: model.OpResults, Results: []model.Result{{
		Unit: "web/0", Hash: sn.View("web/0").Hash, Seen: &model.Seen{Life: model.Alive},
		Settings: map[int]map[string]string{1: {"database": "shop"}},
	}}})
	n, moved = sn.refresh(st, w.changes)
	if !moved || n.rebuild || len(n.gone) != 0 {
		t.Fatalf("refresh after web/0's write: moved %v, note %+v", moved, n)
	}
	if !slices.Equal(n.lacking, []string{"web/0"}) {
		t.Errorf("lacking own writes: %v, want [web/0]", n.lacking)
	}
	stale := map[string]bool{}
	for _, u := range n.stale {
		stale[u.name] = true
	}
	if want := []string{"db/0", "db/1"}; !slices.Equal(slices.Sorted(maps.Keys(stale)), want) {
		t.Errorf("stale: %v, want %v", slices.Sorted(maps.Keys(stale)), want)
	}
	for name, want := range map[string]ViewState{"web/0": ViewLacksOwnWrites, "db/0": ViewHashUnknown, "db/1": ViewHashUnknown, "web/1": ViewCurrent} {
		if got := sn.behind(name); got != want {
			t.Errorf("%s is %d behind, want %d", name, got, want)
		}
	}
	sn.caughtUp(st)
	if n, moved := sn.refresh(st, w.changes); moved {
		t.Errorf("a refresh at the index moved %+v", n)
	}
	sn.forget()
	if n, moved := sn.refresh(st, w.changes); !moved || !n.rebuild || sn.built() {
		t.Errorf("after forget: moved %v, note %+v, built %v; want a rebuild", moved, n, sn.built())
	}
}
