package engine

import (
	"context"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/wire"
)

// slotted drives ctl to the fixed point as an agent with slots hook
// slots does: it claims what its free slots take and reports one run at
// a time. It returns the runs.
func slotted(tb testing.TB, ctl *Controller, slots int) int {
	ctx := context.Background()
	var running []wire.Work
	runs := 0
	for {
		if free := slots - len(running); free > 0 {
			work, err := ctl.WaitForWork(ctx, "m", free, 0)
			if err != nil {
				tb.Fatal(err)
			}
			running = append(running, work...)
		}
		if len(running) == 0 {
			return runs
		}
		w := running[0]
		running = running[1:]
		runs++
		if _, err := ctl.Accept(ctx, "m", []wire.Report{{Unit: w.Unit, Hash: w.Hash, Output: run(w.Universe)}}); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkRelateControlPlane is bench/scale -mode relate without the
// hook processes: one N<->N pair with peers (N=300) driven by an agent of
// four slots that reports each run alone, as fixpoint up's agent does
// when hooks are slow. It reports the control plane's time and the
// universes it rebuilt (and hashed) or built per hook run: what the
// control plane adds to every run of a hook.
func BenchmarkRelateControlPlane(b *testing.B) {
	const n = 300
	for i := 0; i < b.N; i++ {
		s := newMemStore()
		pairs(b, s, 1, n)
		ctl := NewController(s, Options{Window: 1})
		start := time.Now()
		runs := slotted(b, ctl, 4)
		el := time.Since(start)
		ws := ctl.Stats()
		b.ReportMetric(float64(runs)/float64(2*n), "runs/unit")
		b.ReportMetric(float64(el.Milliseconds())/float64(runs), "ms/run")
		b.ReportMetric(float64(ws.Rebuilt)/float64(runs), "rebuilt/run")
		b.ReportMetric(float64(ws.Built)/float64(runs), "built/run")
	}
}
