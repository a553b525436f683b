package schedule

import (
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

// machineOrder is one machine's listed units in unit order, kept between
// Chooses so that a look walks them in order without sorting them: the
// units listed since the last walk wait in added and are merged in at the
// next, and those taken off stay until they are more than half of sorted
// (the walk skips them). spare is the merge's other buffer.
type machineOrder struct {
	sorted, added, spare []unitKey
	stale                int
}

// inOrder returns machine's listed units in unit order, and perhaps some
// taken off since, which the caller skips (waveIndex.placed says).
func (x *waveIndex) inOrder(machine string) []unitKey {
	o := x.order[machine]
	if o == nil {
		return nil
	}
	if o.stale > len(o.sorted)/2 {
		set := x.machines[machine]
		kept := o.sorted[:0]
		for _, k := range o.sorted {
			if _, ok := set[k.name]; ok {
				kept = append(kept, k)
			}
		}
		clear(o.sorted[len(kept):])
		o.sorted, o.stale = kept, 0
	}
	if len(o.added) == 0 {
		return o.sorted
	}
	slices.SortFunc(o.added, unitKey.cmp)
	out := o.spare[:0]
	push := func(k unitKey) {
		// A unit taken off and listed again is in both: once is enough.
		if n := len(out); n == 0 || out[n-1].name != k.name {
			out = append(out, k)
		}
	}
	a, b := o.sorted, o.added
	for len(a) > 0 || len(b) > 0 {
		if len(b) == 0 || len(a) > 0 && !b[0].less(a[0]) {
			push(a[0])
			a = a[1:]
		} else {
			push(b[0])
			b = b[1:]
		}
	}
	clear(o.sorted)
	clear(o.added)
	o.spare, o.sorted, o.added = o.sorted[:0], out, o.added[:0]
	return o.sorted
}
