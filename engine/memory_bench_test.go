package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
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
				for _, r := range u.Seen.Relations.All() {
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
			for _, sr := range seen.Relations.All() {
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

// BenchmarkBytesPerUnit converges 10,000 units (100 pairs of 50-unit
// services with peers) through a real single-node raftstore.Store and
// reports, per retained structure, the Go heap it holds per unit at the
// fixed point ("bytes/unit"), to hold against the budget of
// docs/memory.md:
//
//   - state: the replicated state, as a node restores it from a snapshot;
//   - events: the unit events' bounded store, as a snapshot restores it;
//   - raftlog: the Raft log cache's entries;
//   - views: a leader's controller (universes, phases, ledgers, queues),
//     as a new leader builds it at the fixed point;
//   - history: the run history of the leader's controller.
//
// Each measures space: one run of its body says it, so its b.N matters
// not.
func BenchmarkBytesPerUnit(b *testing.B) {
	const pairsN, k = 100, 50
	units := float64(2 * pairsN * k)
	store, err := raftstore.Open(context.Background(), raftstore.Config{
		NodeID: "n1", DataDir: b.TempDir(), RaftAddr: "127.0.0.1:0", HTTPAddr: "http://127.0.0.1:1",
		Bootstrap: true, Logger: hclog.NewNullLogger(),
	})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	rafttest.Eventually(b, time.Minute, "n1 leads", func() error {
		if !store.IsLeader() {
			return errors.New("not the leader yet")
		}
		return nil
	})
	pairs(b, store, pairsN, k)
	ctl := NewController(store, Options{Window: 1, IsLeader: store.IsLeader})
	if runs := converge(b, ctl); runs < int(units) {
		b.Fatalf("%d runs for %.0f units", runs, units)
	}
	perUnit := func(b *testing.B, bytes uint64) {
		b.ReportMetric(float64(bytes)/units, "bytes/unit")
	}
	b.Run("state", func(b *testing.B) {
		var data []byte
		_ = store.View(func(st *model.State) error {
			data, err = json.Marshal(st)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		for range b.N {
			perUnit(b, stateHeapApart(b, data))
		}
	})
	b.Run("events", func(b *testing.B) {
		data, err := json.Marshal(store.EventStore().Dump())
		if err != nil {
			b.Fatal(err)
		}
		for range b.N {
			grown, s := heapOf(func() any {
				var d model.BoundedDump[model.Event]
				if err := json.Unmarshal(data, &d); err != nil {
					b.Fatal(err)
				}
				s := model.NewEventStore()
				s.Load(&d)
				return s
			})
			runtime.KeepAlive(s)
			perUnit(b, grown)
		}
	})
	b.Run("raftlog", func(b *testing.B) {
		for range b.N {
			_, bytes := store.LogCache()
			perUnit(b, uint64(bytes))
		}
	})
	b.Run("views", func(b *testing.B) {
		for range b.N {
			grown, c := heapOf(func() any {
				c := NewController(store, Options{Window: 1, IsLeader: store.IsLeader})
				if err := c.Refresh(); err != nil {
					b.Fatal(err)
				}
				if work, err := c.WaitForWork(context.Background(), "m", 64, 0); err != nil || len(work) > 0 {
					b.Fatalf("a new leader at the fixed point: %d runs to hand out, %v", len(work), err)
				}
				return c
			})
			runtime.KeepAlive(c)
			perUnit(b, grown)
		}
	})
	// Last, as it takes the history away: what the heap frees when the
	// leader's run history lets its runs go, and the strings and changes
	// it shares between them.
	h := ctl.History()
	with := liveHeap()
	h.mu.Lock()
	h.units, h.shared, h.sharedChanges = map[string]unitRuns{}, map[string]string{}, map[Change]*Change{}
	h.mu.Unlock()
	without := liveHeap()
	runtime.KeepAlive(ctl)
	b.Run("history", func(b *testing.B) {
		for range b.N {
			perUnit(b, with-min(with, without))
		}
	})
}

// stateHeapEnv names the encoded state a child process of the test
// binary decodes, to say on its standard output the heap it grew by.
const stateHeapEnv = "FIXPOINT_STATE_HEAP"

// stateHeapApart is the heap a state decoded from data holds, measured in
// a child process: in this one, the state data was encoded from is alive,
// and anything the decoder shares process-wide (interned strings) would
// cost the copy nothing.
func stateHeapApart(b *testing.B, data []byte) uint64 {
	path := filepath.Join(b.TempDir(), "state.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), stateHeapEnv+"="+path)
	out, err := child.Output()
	if err != nil {
		b.Fatalf("the child measuring the state: %v", err)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		b.Fatalf("the child measuring the state said %q: %v", out, err)
	}
	return n
}

// TestMain is a child of stateHeapApart when stateHeapEnv is set, and
// runs the package's tests otherwise.
func TestMain(m *testing.M) {
	if path := os.Getenv(stateHeapEnv); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		grown, st := heapOf(func() any {
			var st model.State
			if err := json.Unmarshal(data, &st); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			st.Normalize()
			return &st
		})
		// data stays alive until after the measure, as it was before
		// it: the state's growth is what is left.
		runtime.KeepAlive(st)
		runtime.KeepAlive(data)
		fmt.Println(grown)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// heapOf is how much the live heap grows by what fill makes and keeps.
func heapOf(fill func() any) (uint64, any) {
	before := liveHeap()
	kept := fill()
	after := liveHeap()
	if after < before {
		return 0, kept
	}
	return after - before, kept
}
