package api_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/fixpoint/fixpoint/engine/api"
)

// TestReleasedIsWhatIsNoLongerPlaced: an agent asking about the units
// whose storage it keeps is told those the state does not place on its
// machine (removed, never there), not those it does; a name that is not
// a unit's is refused, and nothing of the ask counts as running.
func TestReleasedIsWhatIsNoLongerPlaced(t *testing.T) {
	n := startNode(t, "n1")
	deployRelated(t, n)
	agent := api.NewClient([]string{n.addr}, joinToken, nil)
	if err := agent.Register(ctxT(t), "m1", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	released, err := agent.Released(ctxT(t), "m1", []string{"db/0", "web/0", "db/7", "gone/3"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"db/7", "gone/3"}; !slices.Equal(released, want) {
		t.Errorf("released %v, want %v", released, want)
	}
	if _, err := agent.Released(ctxT(t), "m1", []string{"../etc"}); !errors.Is(err, api.ErrBadRequest) {
		t.Errorf("a kept name that is no unit's: %v, want a bad request", err)
	}
}
