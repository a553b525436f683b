package engine

import (
	"context"
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
	s := newMemStore()
	shop(t, s, 2, 2)
	sn := newStaleness()
	_ = s.View(func(st *model.State) error {
		n, moved := sn.refresh(st)
		if !moved || !n.rebuild {
			t.Fatalf("first refresh: moved %v, note %+v; want a rebuild of every view", moved, n)
		}
		sn.reset(len(st.Units))
		for name := range st.Units {
			_, _, h, _ := buildHashed(st, name)
			sn.install(name, &view{hash: h, machine: st.Units[name].Machine})
		}
		sn.caughtUp(st)
		return nil
	})
	if _, err := s.Apply(context.Background(), &model.Command{Op: model.OpResults, Results: []model.Result{{
		Unit: "web/0", Hash: hashOf(s, "web/0"), Seen: &model.Seen{Life: model.Alive},
		Settings: map[int]map[string]string{1: {"database": "shop"}},
	}}}); err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(st *model.State) error {
		n, moved := sn.refresh(st)
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
		for name, want := range map[string]viewState{"web/0": viewLacksOwnWrites, "db/0": viewHashUnknown, "db/1": viewHashUnknown, "web/1": viewCurrent} {
			if got := sn.behind(name); got != want {
				t.Errorf("%s is %d behind, want %d", name, got, want)
			}
		}
		sn.caughtUp(st)
		if n, moved := sn.refresh(st); moved {
			t.Errorf("a refresh at the index moved %+v", n)
		}
		sn.forget()
		if n, moved := sn.refresh(st); !moved || !n.rebuild || sn.built() {
			t.Errorf("after forget: moved %v, note %+v, built %v; want a rebuild", moved, n, sn.built())
		}
		return nil
	})
}
