package engine

import (
	"encoding/json"
	"runtime"
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

// BenchmarkMemoryPerUnit converges 2,000 units (20 pairs of 50-unit
// services with peers: per unit, the same as 10,000 in 100 pairs) and reports where the leader's live heap goes, per
// unit: the replicated state, the part of it that is the units' Seen
// records (the remote members' revisions each unit last reconciled), the
// controller's views, and the state's size as JSON (what a snapshot holds).
// It measures space, not time: one run takes seconds, so the framework
// runs it once.
func BenchmarkMemoryPerUnit(b *testing.B) {
	const pairsN, k = 20, 50
	units := float64(2 * pairsN * k)
	s := newMemStore()
	pairs(b, s, pairsN, k)
	ctl := NewController(s, Options{Window: 1})
	converge(b, ctl)
	withViews := liveHeap()
	runtime.KeepAlive(ctl)
	state := liveHeap()
	var snapshot int
	var seen int
	_ = s.View(func(st *model.State) error {
		data, err := json.Marshal(st)
		if err != nil {
			b.Fatal(err)
		}
		snapshot = len(data)
		for _, u := range st.Units {
			if u.Seen != nil {
				for _, r := range u.Seen.Relations {
					seen += r.Members.Len()
				}
			}
		}
		return nil
	})
	_ = s.View(func(st *model.State) error {
		for _, u := range st.Units {
			u.Seen = nil
		}
		return nil
	})
	noSeen := liveHeap()
	runtime.KeepAlive(s)
	b.ReportMetric(float64(state)/units/1024, "state-KiB/unit")
	b.ReportMetric(float64(state-noSeen)/units/1024, "seen-KiB/unit")
	b.ReportMetric(float64(withViews-state)/units/1024, "views-KiB/unit")
	b.ReportMetric(float64(snapshot)/units/1024, "json-KiB/unit")
	b.ReportMetric(float64(seen)/units, "seen-members/unit")
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestSeenDoesNotGrowWithRelations pins the size of what a unit's Seen
// records: the same for a unit of 10-unit services as for one of
// 1,000-unit services (it kept every member's revision, 99 times more).
func TestSeenDoesNotGrowWithRelations(t *testing.T) {
	size := map[int]int{}
	for _, k := range []int{10, 1000} {
		s := newMemStore()
		pairs(t, s, 1, k)
		_ = s.View(func(st *model.State) error {
			_, seen := Build(st, "web0/7")
			members := 0
			for _, sr := range seen.Relations {
				members += sr.Members.Len()
			}
			if members != 2*k-1 {
				t.Errorf("k=%d: web0/7 saw %d members; want %d", k, members, 2*k-1)
			}
			b, err := json.Marshal(seen)
			if err != nil {
				t.Fatal(err)
			}
			size[k] = len(b)
			return nil
		})
	}
	// Unit numbers take a digit or two more at 1,000.
	if size[1000] > size[10]+16 {
		t.Errorf("Seen is %d bytes at 10 units a service, %d at 1,000", size[10], size[1000])
	}
}
