package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

// TestFirstUniverseHasEmptyMapsNotNull: before its first run a unit's
// state and a peer relation's remote_app are {} as the docs say, so that a
// hook can index them; and the hash is the same as with null.
func TestFirstUniverseHasEmptyMapsNotNull(t *testing.T) {
	s := newMemStore()
	shop(t, s, 2, 1)
	_ = s.View(func(st *model.State) error {
		uni, _ := Build(st, "db/0")
		raw, err := json.Marshal(uni)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), `"state":null`) || strings.Contains(string(raw), `"remote_app":null`) || !strings.Contains(string(raw), `"state":{}`) || !strings.Contains(string(raw), `"remote_app":{}`) {
			t.Errorf("first universe: %s", raw)
		}
		h := Hash(uni)
		uni.State = nil
		uni.Relation("cluster").RemoteApp = nil
		if Hash(uni) != h {
			t.Error("{} and null hash differently: every unit would run again")
		}
		return nil
	})
}
