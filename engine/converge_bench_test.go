package engine

import (
	"fmt"
	"testing"
)

// BenchmarkConvergeCPUPerUnit converges 2,000 and 8,000 units (pairs of
// 50-unit services with peers, every unit on one machine) and reports the
// process's CPU per unit: work that grows with the environment rather
// than with each change shows as a higher figure at 8,000 than at 2,000.
// One run says it, so its b.N matters not.
func BenchmarkConvergeCPUPerUnit(b *testing.B) {
	for _, pairsN := range []int{20, 80} {
		units := 2 * pairsN * 50
		b.Run(fmt.Sprintf("units=%d", units), func(b *testing.B) {
			for range b.N {
				s := newMemStore()
				pairs(b, s, pairsN, 50)
				ctl := NewController(s, Options{Window: 1})
				before := cpuTime()
				if runs := converge(b, ctl); runs < units {
					b.Fatalf("%d runs for %d units", runs, units)
				}
				b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(units), "cpu-µs/unit")
			}
		})
	}
}
