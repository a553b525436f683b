package schedule

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
)

// TestInOrderIsUnitLess: the units a poll reads come in charmapi.UnitLess
// order, whichever prefix it reads, as a full sort would give them; names
// that are not service/N included.
func TestInOrderIsUnitLess(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"web/10", "web/2", "db/0", "web/x", "web", "a-b/3", "db/10", "db/9", "web/02", "web/2"}
	for range 200 {
		names = append(names, []string{"db", "web", "web-2", "a"}[rng.IntN(4)]+"/"+[]string{"0", "1", "7", "10", "123", "x"}[rng.IntN(6)])
	}
	want := slices.Clone(names)
	charmapi.SortUnits(want)
	sorted := slices.Clone(names)
	sortUnits(sorted)
	if !slices.Equal(sorted, want) {
		t.Fatalf("sortUnits: %v; want %v", sorted, want)
	}
	for _, n := range []int{0, 1, 5, len(names)} {
		var got []string
		for name := range inOrder(slices.Clone(names)) {
			if len(got) == n {
				break
			}
			got = append(got, name)
		}
		if !slices.Equal(got, want[:n]) {
			t.Fatalf("the first %d in order: %v; want %v", n, got, want[:n])
		}
	}
}
