package engine

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/model"
)

// The fixtures were written by the engine before Seen was compacted
// (commit 819697c): a converged pair of 4-unit services with peers, then
// db0/1's settings changed, db0 scaled to 3 (db0/3 ran its teardown and
// was removed while the others still listed it) and web0/2 reconciled
// again. seen-v1-events.json holds the events and departed settings each
// unit would have been given next.
type seenGolden struct {
	Events   []charmapi.Event                        `json:"events"`
	Departed map[string]map[string]map[string]string `json:"departed,omitempty"`
}

// TestSeenFromOldStateDerivesTheSameEvents loads a state written with
// per-member revisions and checks that every unit is given exactly the
// events and departed settings the old representation gave, before and
// after the state goes through the new encoding once.
func TestSeenFromOldStateDerivesTheSameEvents(t *testing.T) {
	raw, err := os.ReadFile("testdata/seen-v1-state.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]seenGolden
	if b, err := os.ReadFile("testdata/seen-v1-events.json"); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	st := model.NewState()
	if err := json.Unmarshal(raw, st); err != nil {
		t.Fatalf("old state does not load: %v", err)
	}
	st.Normalize()
	check := func(st *model.State, when string) {
		if len(st.Units) != len(want) {
			t.Fatalf("%s: %d units; want %d", when, len(st.Units), len(want))
		}
		for name, w := range want {
			uni, seen := Build(st, name)
			if uni == nil {
				t.Fatalf("%s: unit %s is missing", when, name)
			}
			ru := schedule.RunUniverse(st, st.Units[name], uni, Hash(uni), seen)
			got := seenGolden{Events: ru.Events}
			for _, r := range ru.Relations {
				if r.Departed != nil {
					if got.Departed == nil {
						got.Departed = map[string]map[string]map[string]string{}
					}
					got.Departed[r.Ident] = r.Departed
				}
			}
			if !reflect.DeepEqual(got, w) {
				t.Errorf("%s: unit %s:\n got %+v\nwant %+v", when, name, got, w)
			}
		}
	}
	check(st, "old state")
	again, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	st2 := model.NewState()
	if err := json.Unmarshal(again, st2); err != nil {
		t.Fatalf("re-encoded state does not load: %v", err)
	}
	st2.Normalize()
	check(st2, "re-encoded state")
	var old bytes.Buffer
	if err := json.Compact(&old, raw); err != nil {
		t.Fatal(err)
	}
	if len(again) >= old.Len() {
		t.Errorf("re-encoded state is %d bytes; the old one %d", len(again), old.Len())
	}
}
