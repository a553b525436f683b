package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// statusFixtures keeps one deployed environment per size across the
// rounds of -count, so that status and summary alternate on the same one.
var statusFixtures = map[int]*Controller{}

// statusFixture is units units (pairs of 50-unit services with peers, as
// bench/scale deploys them) on one machine, every view built, with 1,000 of
// them handed out (reconciling) and the rest pending.
func statusFixture(b *testing.B, units int) *Controller {
	if ctl := statusFixtures[units]; ctl != nil {
		return ctl
	}
	s := newMemStore()
	pairs(b, s, units/100, 50)
	ctl := NewController(s, Options{Window: 1})
	if _, err := ctl.WaitForWork(context.Background(), "m", 1000, 0); err != nil {
		b.Fatal(err)
	}
	statusFixtures[units] = ctl
	return ctl
}

// BenchmarkStatusVsSummary measures one answer to a waiter's poll after a
// change: the full status (GET /v1/status) against its summary
// (?summary=1), at 10,000 and 100,000 units: time and allocations under
// the controller's lock, and wire-B/op, the compact JSON the poll carries.
// Each size runs three rounds, status and summary alternating, since the
// machine is noisy. The generation moves before every answer, as it does
// for a waiter woken by a change (a summary at an unchanged generation is
// a cached copy).
func BenchmarkStatusVsSummary(b *testing.B) {
	for _, units := range []int{10_000, 100_000} {
		ctl := statusFixture(b, units)
		for round := 0; round < 3; round++ {
			b.Run(fmt.Sprintf("units=%d/status", units), func(b *testing.B) {
				measure(b, func() any {
					ctl.NoteChange()
					st, err := ctl.Status()
					if err != nil {
						b.Fatal(err)
					}
					return st
				})
			})
			b.Run(fmt.Sprintf("units=%d/summary", units), func(b *testing.B) {
				measure(b, func() any {
					ctl.NoteChange()
					sum, err := ctl.Summary(SummaryLimit)
					if err != nil {
						b.Fatal(err)
					}
					return sum
				})
			})
		}
	}
}

// measure runs answer b.N times and reports the size of its compact JSON
// and the process's CPU time per answer (the garbage collector's share
// included): on a loaded machine wall time says more about the neighbours.
func measure(b *testing.B, answer func() any) {
	var wire int
	b.ReportAllocs()
	before := cpuTime()
	for i := 0; i < b.N; i++ {
		v := answer()
		if i == 0 {
			// Encoding is the server's cost, not the answer's: the
			// wire size is what it says, and its time is left out.
			t := cpuTime()
			data, _ := json.Marshal(v)
			wire = len(data)
			before += cpuTime() - t
		}
	}
	b.ReportMetric(float64(cpuTime()-before)/float64(b.N)/1e6, "cpu-ms/op")
	b.ReportMetric(float64(wire), "wire-B/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSummaryAfterAChange measures a waiter's poll at a fixed point
// of 10,000 units (100 pairs of 50-unit services with peers, every unit
// settled) right after one unit wrote its peer settings, which its 50
// peers see: the summary recounting what moved (recount.go) against a
// recount of every unit ("walk": what a rebuild of every view costs the
// next summary, and about what every summary cost before the tally). The
// two alternate over three rounds, since the machine is noisy; the
// change and the convergence after it are outside the timer.
func BenchmarkSummaryAfterAChange(b *testing.B) {
	s := newMemStore()
	pairs(b, s, 100, 50)
	ctl := NewController(s, Options{Window: 1})
	converge(b, ctl)
	bump := 0
	for round := 0; round < 3; round++ {
		for _, walk := range []bool{true, false} {
			b.Run(fmt.Sprintf("units=10000/walk=%t", walk), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					bump++
					unit := fmt.Sprintf("web%d/%d", bump%100, bump%50)
					peerWrite(b, s, unit, map[string]string{"bump": fmt.Sprint(bump)})
					if walk {
						ctl.stat.inbox.markAll()
					}
					b.StartTimer()
					sum, err := ctl.Summary(SummaryLimit)
					b.StopTimer()
					if err != nil || sum.Phases.Pending == 0 {
						b.Fatalf("summary after the change: %v %+v", err, sum)
					}
					converge(b, ctl)
					b.StartTimer()
				}
			})
		}
	}
}
