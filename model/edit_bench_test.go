package model

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkEditRoundTrip is an imperative edit's round trip on a
// deployed environment of 100 services, as `fixpoint add-unit` makes it:
// the document read, one unit added to a copy, and the deploy of it
// checked against the revision and applied. Its cost follows the change,
// not the units deployed: the ns/op of units=100000 stays near that of
// units=1000, and the "vs-1k" metric (this size's time per edit over the
// smallest's, from the same run) stays near 1.
func BenchmarkEditRoundTrip(b *testing.B) {
	var first float64
	for _, perService := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("units=%d", 100*perService), func(b *testing.B) {
			s := bigState(b, 50, perService, 3)
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				doc, err := s.EnvDocument()
				if err != nil {
					b.Fatal(err)
				}
				edited := EditCopy(doc)
				if err := EditAddUnits(edited, "web-0", 1, nil); err != nil {
					b.Fatal(err)
				}
				c := &Command{Op: OpDeploy, Deploy: &Deploy{Env: *edited, Charms: charms(), BaseIndex: s.EnvIndex, Record: true}}
				if _, err := s.Apply(s.Index+1, c); err != nil {
					b.Fatal(err)
				}
			}
			per := float64(time.Since(start).Nanoseconds()) / float64(b.N)
			if perService == 10 {
				first = per
			}
			b.ReportMetric(per/first, "vs-1k")
			b.ReportMetric(float64(len(s.Units)), "units")
		})
	}
}
