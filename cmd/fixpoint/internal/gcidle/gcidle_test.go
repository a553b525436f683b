package gcidle

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// sink keeps each burst's allocations from being optimised away.
var sink []byte

// burst allocates n bytes in 8 KiB pieces, each garbage at once.
func burst(n int) {
	for range n / 8192 {
		sink = make([]byte, 8192)
	}
	sink = nil
}

// cycles is how many collections the runtime started on its own.
func cycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/automatic:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// liveHeap holds 16 MiB until the test ends, so that a cycle's runway is
// 16 MiB at the default GOGC.
func liveHeap(t *testing.T) {
	t.Helper()
	old := debug.SetGCPercent(100)
	keep := make([][]byte, 0, 256)
	for range 256 {
		keep = append(keep, make([]byte, 64<<10))
	}
	runtime.GC()
	t.Cleanup(func() {
		runtime.KeepAlive(keep)
		debug.SetGCPercent(old)
	})
}

// TestCollectionsRunBetweenBursts: 2 MiB bursts over a 16 MiB live heap,
// a check after each, as a server's hand-outs end. Left to itself, the
// runtime starts a cycle every few bursts, inside one; with the checks,
// every cycle runs between bursts.
func TestCollectionsRunBetweenBursts(t *testing.T) {
	liveHeap(t)
	c := New(time.Hour) // checked by hand below, not by its timer
	inBursts := uint64(0)
	for range 60 {
		before := cycles()
		burst(2 << 20)
		inBursts += cycles() - before
		c.check()
	}
	if c.Ran() < 3 {
		t.Fatalf("the collector ran %d collections over 120 MiB of bursts on a 16 MiB heap; want several", c.Ran())
	}
	if inBursts != 0 {
		t.Fatalf("%d collections started inside a burst; want none, all between bursts (%d ran there)", inBursts, c.Ran())
	}
}

// TestDue: the rule, at a 16 MiB live heap and a 32 MiB goal, where a
// cycle may start from 27.25 MiB on.
func TestDue(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		why                string
		heap, least, burst uint64
		want               bool
	}{
		{"the largest burst would reach where a cycle may start", 24 * mib, 2 * mib, 3 * mib, true},
		{"the largest burst leaves room", 20 * mib, 2 * mib, 3 * mib, false},
		{"a quarter more than the largest burst reaches it", 24 * mib, 2 * mib, 27 * mib / 10, true},
		{"too early in the cycle, however large the bursts", 19 * mib, 1 * mib, 16 * mib, false},
		{"a quarter of the runway used, large bursts", 20 * mib, 1 * mib, 16 * mib, true},
		{"every recent burst alone outgrew the runway", 26 * mib, 12 * mib, 12 * mib, false},
		{"one burst outgrew the runway, not the others", 26 * mib, 2 * mib, 12 * mib, true},
		{"a cycle under way: the heap below the live heap", 15 * mib, 1 * mib, 3 * mib, false},
	} {
		if got := due(32*mib, c.heap, 16*mib, c.least, c.burst); got != c.want {
			t.Errorf("%s: due = %v, want %v", c.why, got, c.want)
		}
	}
}

// TestQuietChecksOnItsOwn: Quiet arms the check, which runs once the
// quiet has passed without another burst.
func TestQuietChecksOnItsOwn(t *testing.T) {
	liveHeap(t)
	c := New(time.Millisecond)
	// Past half the runway, the bursts recorded are large enough to
	// bring the next cycle forward.
	for {
		burst(1 << 20)
		v := c.read()
		goal, heap, live := v[0], v[2], v[3]
		if heap >= live && goal > live && heap-live >= (goal-live)*5/8 {
			break
		}
	}
	c.mu.Lock()
	for i := range c.bursts {
		c.bursts[i] = 16 << 20
	}
	c.mu.Unlock()
	checked := make(chan struct{}, 1)
	c.checked = checked
	c.Quiet()
	select {
	case <-checked:
	case <-time.After(time.Minute): // bounds a failure only
		t.Fatal("no check a minute after a quiet")
	}
	if c.Ran() != 1 {
		t.Fatalf("the check after a quiet with the heap near its goal ran %d collections; want 1", c.Ran())
	}
}
