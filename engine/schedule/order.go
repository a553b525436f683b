package schedule

import (
	"container/heap"
	"iter"
	"slices"

	"github.com/fixpoint/fixpoint/charmapi"
)

// unitKey is a unit's name with its charmapi.UnitLess order parsed once,
// so that ordering a machine's many units compares no name twice over.
type unitKey struct {
	svc  string
	num  int
	name string
}

func keyOf(name string) unitKey {
	return unitKey{svc: charmapi.ServiceOf(name), num: charmapi.UnitNumber(name), name: name}
}

// less is charmapi.UnitLess.
func (a unitKey) less(b unitKey) bool {
	if a.svc != b.svc {
		return a.svc < b.svc
	}
	if a.num != b.num {
		return a.num < b.num
	}
	return a.name < b.name
}

func (a unitKey) cmp(b unitKey) int {
	switch {
	case a.less(b):
		return -1
	case b.less(a):
		return 1
	}
	return 0
}

// sortUnits sorts names in charmapi.UnitLess order.
func sortUnits(names []string) {
	if len(names) < 2 {
		return
	}
	keys := make([]unitKey, len(names))
	for i, n := range names {
		keys[i] = keyOf(n)
	}
	slices.SortFunc(keys, unitKey.cmp)
	for i, k := range keys {
		names[i] = k.name
	}
}

// unitHeap is a min-heap of units in charmapi.UnitLess order.
type unitHeap []unitKey

func (h unitHeap) Len() int           { return len(h) }
func (h unitHeap) Less(i, j int) bool { return h[i].less(h[j]) }
func (h unitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *unitHeap) Push(x any)        { *h = append(*h, x.(unitKey)) }
func (h *unitHeap) Pop() any {
	old := *h
	k := old[len(old)-1]
	*h = old[:len(old)-1]
	return k
}

// inOrder yields names in charmapi.UnitLess order, ordering only as many
// as are read: a poll takes the first few of a machine's units that may
// run, and sorting every one of them made each poll cost the machine's
// whole queue times its logarithm. It reorders names.
func inOrder(names []string) iter.Seq[string] {
	return func(yield func(string) bool) {
		h := make(unitHeap, len(names))
		for i, n := range names {
			h[i] = keyOf(n)
		}
		heap.Init(&h)
		for h.Len() > 0 {
			if !yield(heap.Pop(&h).(unitKey).name) {
				return
			}
		}
	}
}
