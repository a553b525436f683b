package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// historyBatches makes batches of runs as the controller records them: a
// fresh hash each, a status change and settings keys the units of a
// service share, and a long value each unit has of its own.
func historyBatches(units, batches, size int) [][]Run {
	now := time.Now()
	out := make([][]Run, batches)
	n := 0
	for i := range out {
		out[i] = make([]Run, size)
		for j := range out[i] {
			svc := fmt.Sprintf("svc%d", n%units/50)
			unit := fmt.Sprintf("%s/%d", svc, n%units%50)
			sum := sha256.Sum256([]byte(strconv.Itoa(n)))
			out[i][j] = Run{
				Unit: unit, Service: svc, Time: now, Hash: hex.EncodeToString(sum[:16]),
				Duration: time.Duration(n) * time.Microsecond, Outcome: RunOK,
				Changes: []Change{
					{Key: "status", Old: strconv.Quote("waiting: installing"), New: strconv.Quote("active")},
					{Key: "relations." + "db:1.local.host", Old: "(unset)", New: strconv.Quote("10.0.0.1")},
					{Key: "relations." + "cluster:0.local.peers", Old: "(unset)", New: strconv.Quote(strings.Repeat(unit+" ", 20))},
					{Key: "relations." + "db:1.local.password", Old: "(unset)", New: strconv.Quote("pw"), Secret: true},
				},
			}
			if n%7 == 0 {
				out[i][j].Outcome, out[i][j].Error, out[i][j].Changes = RunError, "hook reconcile exited with status 1", nil
				out[i][j].Stderr = "Traceback (most recent call last):\n  boom"
			}
			n++
		}
	}
	return out
}

// BenchmarkHistory measures the leader's run history: adding batches of
// runs to units whose history is full (as at a long-lived fixed point),
// to a fresh history (units' first runs), and reading one unit's runs,
// one service's and every unit's.
func BenchmarkHistory(b *testing.B) {
	const units, size = 1000, 64
	batches := historyBatches(units, 64, size)
	full := func() *History {
		h := NewHistory(DefaultHistory)
		for range DefaultHistory*units/(size*len(batches)) + 1 {
			for _, batch := range batches {
				h.Add(batch...)
			}
		}
		return h
	}
	b.Run("add", func(b *testing.B) {
		h := full()
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			h.Add(batches[i%len(batches)]...)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size), "ns/run")
	})
	b.Run("add-fresh", func(b *testing.B) {
		h := NewHistory(DefaultHistory)
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			if i%(DefaultHistory*units/size) == 0 {
				h = NewHistory(DefaultHistory)
			}
			h.Add(batches[i%len(batches)]...)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size), "ns/run")
	})
	h := full()
	for _, read := range []struct{ name, filter string }{{"runs-unit", "svc3/7"}, {"runs-service", "svc3"}, {"runs-all", ""}} {
		b.Run(read.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if runs, _ := h.Runs(read.filter, 0); len(runs) == 0 {
					b.Fatalf("no runs of %q", read.filter)
				}
			}
		})
	}
}
