package memgov

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestGovernorSlowsIntakeAndRecovers drives a governor with an injected
// reading over its limit: intake is paced (the next request turned away
// while its turn is far off), the condition says so, and once the reading
// falls below the low mark everything is admitted again.
func TestGovernorSlowsIntakeAndRecovers(t *testing.T) {
	var used atomic.Uint64
	g := New(Limit{Bytes: 1000, Source: SourceFlag}, used.Load)
	g.SetPace(time.Hour, 0)
	ctx := context.Background()

	used.Store(500)
	if g.Sample() || !g.Admit(ctx) || !g.Admit(ctx) || g.Condition() != "" {
		t.Fatal("below the limit: want no pressure and every request admitted")
	}
	used.Store(950)
	if !g.Sample() || !g.Under() {
		t.Fatal("at 95% of the limit: want pressure")
	}
	if !g.Admit(ctx) {
		t.Fatal("the first request under pressure takes the first turn")
	}
	if g.Admit(ctx) {
		t.Fatal("the next request's turn is a pace away, beyond the hold: want it turned away")
	}
	if c := g.Condition(); c == "" {
		t.Fatal("under pressure, the condition is empty")
	}
	used.Store(850)
	if !g.Sample() {
		t.Fatal("between the low and high marks: pressure holds")
	}
	used.Store(700)
	if g.Sample() || !g.Admit(ctx) || !g.Admit(ctx) {
		t.Fatal("below the low mark: want no pressure and every request admitted")
	}
	st := g.Stats()
	if st.Refused != 1 || st.Pressures != 1 || st.Under || st.Used != 700 || st.Limit != 1000 {
		t.Fatalf("stats %+v", st)
	}
}

// TestGovernorHoldsForItsTurn: under pressure with a short pace, a
// second request waits its turn and is admitted, and counted as held.
func TestGovernorHoldsForItsTurn(t *testing.T) {
	g := New(Limit{Bytes: 100, Source: SourceCgroup}, func() uint64 { return 100 })
	g.SetPace(time.Millisecond, time.Minute)
	g.Sample()
	ctx := context.Background()
	if !g.Admit(ctx) || !g.Admit(ctx) {
		t.Fatal("want both admitted, the second after its turn")
	}
	if st := g.Stats(); st.Held != 1 || st.Refused != 0 {
		t.Fatalf("stats %+v; want one held", st)
	}
	// A request whose caller gives up is not admitted.
	g.SetPace(time.Hour, time.Hour)
	g.Admit(ctx)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if g.Admit(cctx) {
		t.Fatal("a cancelled request was admitted")
	}
}

func TestNoLimitNoPressure(t *testing.T) {
	g := New(Limit{Source: SourceNone}, func() uint64 { return 1 << 40 })
	if g.Sample() || !g.Admit(context.Background()) {
		t.Fatal("without a limit nothing is pressure")
	}
	if InUse() == 0 {
		t.Fatal("the runtime says no memory in use")
	}
}
