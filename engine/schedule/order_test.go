package schedule

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
)

// TestSortUnitsIsUnitLess: names parsed once sort as charmapi.SortUnits
// sorts them, names that are not service/N included.
func TestSortUnitsIsUnitLess(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"web/10", "web/2", "db/0", "web/x", "web", "a-b/3", "db/10", "db/9", "web/02", "web/2"}
	for range 200 {
		names = append(names, randomUnit(rng))
	}
	want := slices.Clone(names)
	charmapi.SortUnits(want)
	sortUnits(names)
	if !slices.Equal(names, want) {
		t.Fatalf("sortUnits: %v; want %v", names, want)
	}
}

func randomUnit(rng *rand.Rand) string {
	return []string{"db", "web", "web-2", "a"}[rng.IntN(4)] + "/" + []string{"0", "1", "7", "10", "123", "x"}[rng.IntN(6)]
}

// TestMachineOrderFollowsListing: through any sequence of units listed
// and taken off, on one machine or moved between two, a walk of a
// machine's order, less the units the walk skips, is its listed units in
// unit order, each once.
func TestMachineOrderFollowsListing(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		x := newWaveIndex()
		for step := range 400 {
			unit := randomUnit(rng)
			switch rng.IntN(3) {
			case 0, 1:
				x.list(unit, []string{"m1", "m2"}[rng.IntN(2)])
			default:
				x.unlist(unit)
			}
			if rng.IntN(4) != 0 {
				continue
			}
			for _, m := range []string{"m1", "m2"} {
				var got []string
				for _, k := range x.inOrder(m) {
					if x.placed[k.name] == m {
						got = append(got, k.name)
					}
				}
				var want []string
				for u := range x.machines[m] {
					want = append(want, u)
				}
				charmapi.SortUnits(want)
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d step %d: %s's walk %v; listed %v", seed, step, m, got, want)
				}
			}
		}
	}
}
