package raftstore

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// BenchmarkSnapshot takes a snapshot of a converged state of 10,000 and
// 100,000 units (pairs of 50-unit services with peers, every unit having
// run once) both ways, in the same process: as it was (json.Marshal of the
// whole document under the FSM lock, then the bytes to the sink) and as it
// is (a copy under the lock, streamed to the sink outside it). It reports
// how long the FSM lock is held, the whole time, the peak heap above the
// live state while the snapshot is taken (sampled, garbage not yet
// collected included), and what the snapshot holds live (the JSON bytes,
// or the copy). The sink discards: the disk is not what is measured.
func BenchmarkSnapshot(b *testing.B) {
	for _, pairs := range []int{100, 1000} {
		b.Run(fmt.Sprintf("units=%d", pairs*100), func(b *testing.B) {
			a := &applier{tb: b, f: newFSM(testLogger(b))}
			streamEnv(a, pairs, 50)
			streamResults(a, 1)
			units := float64(len(a.f.cluster.Default.Units))
			live := liveBytes()
			var size int
			for b.Loop() {
				var lockOld, lockNew time.Duration
				var heldOld, heldNew uint64
				base := liveBytes()
				peakOld, allOld := peakHeap(func() {
					t0 := time.Now()
					a.f.mu.RLock()
					data, err := json.Marshal(document{Version: snapshotVersion, Index: a.f.appliedIndex(), Nodes: a.f.nodes, State: a.f.cluster.Default})
					a.f.mu.RUnlock()
					lockOld = time.Since(t0)
					if err != nil {
						b.Fatal(err)
					}
					size = len(data)
					heldOld = liveBytes() - base
					_, _ = io.Discard.Write(data)
				})
				peakNew, allNew := peakHeap(func() {
					t0 := time.Now()
					snap, _ := a.f.Snapshot()
					lockNew = time.Since(t0)
					heldNew = liveBytes() - base
					if err := snap.Persist(&discardSink{}); err != nil {
						b.Fatal(err)
					}
					snap.Release()
				})
				b.ReportMetric(float64(lockOld.Milliseconds()), "old-lock-ms")
				b.ReportMetric(float64(lockNew.Milliseconds()), "new-lock-ms")
				b.ReportMetric(float64(allOld.Milliseconds()), "old-total-ms")
				b.ReportMetric(float64(allNew.Milliseconds()), "new-total-ms")
				b.ReportMetric(float64(peakOld)/(1<<20), "old-peak-MiB")
				b.ReportMetric(float64(peakNew)/(1<<20), "new-peak-MiB")
				b.ReportMetric(float64(heldOld)/(1<<20), "old-held-MiB")
				b.ReportMetric(float64(heldNew)/(1<<20), "new-held-MiB")
			}
			b.ReportMetric(float64(size)/units, "json-B/unit")
			b.ReportMetric(float64(live)/units/1024, "live-KiB/unit")
			runtime.KeepAlive(a)
		})
	}
}

// discardSink is a raft.SnapshotSink that drops what it is given.
type discardSink struct{}

func (discardSink) Write(p []byte) (int, error) { return len(p), nil }
func (discardSink) ID() string                  { return "discard" }
func (discardSink) Cancel() error               { return nil }
func (discardSink) Close() error                { return nil }

// peakHeap runs fn and returns the most heap it saw in use above what was
// live before (sampled every 100µs: heap objects, garbage not yet
// collected included, which is what the process must hold) and fn's time.
func peakHeap(fn func()) (uint64, time.Duration) {
	base := liveBytes()
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	t0 := time.Now()
	fn()
	took := time.Since(t0)
	close(done)
	wg.Wait()
	if peak < base {
		return 0, took
	}
	return peak - base, took
}

// liveBytes is the heap in use after a full collection.
func liveBytes() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
