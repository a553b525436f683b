package raftstore

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// floodBatch is a batch as a hostile agent of machine sends it: the most
// lines of the longest messages one command takes.
func floodBatch(machine string, lines, size int, at time.Time) *model.LogBatch {
	b := &model.LogBatch{}
	for i := range lines {
		b.Lines = append(b.Lines, model.LogLine{Machine: machine, Level: "info", Origin: model.OriginAgent,
			Time: at.UnixNano() + int64(i), Message: strings.Repeat("x", size)})
	}
	return b
}

// isCount reports whether l is a budget's dropped-lines count.
func isCount(l *model.LogLine) (int, bool) { return droppedCount(l) }

// A source flooding the log gets its budget and no more; a quiet source
// beside it loses nothing; what was dropped is counted, in full, in
// warning lines ahead of the flooder's next lines that fit.
func TestLogMeterHoldsEachSourceToItsBudget(t *testing.T) {
	b := LogBudget{BytesPerSecond: 1000, LinesPerSecond: 10, BatchBytes: 4000, BatchLines: 20}
	m := newLogMeter(b)
	start := time.Unix(1_700_000_000, 0)
	now := start
	keptBytes, dropped, counted, quiet := 0, 0, 0, 0
	tally := func(kept *model.LogBatch) {
		if kept == nil {
			return
		}
		for i := range kept.Lines {
			l := &kept.Lines[i]
			if n, ok := isCount(l); ok {
				if l.Machine != "m1" || l.Level != "warning" || l.Check() != nil {
					t.Fatalf("count line %+v: want a valid warning of machine m1", l)
				}
				counted += n
				continue
			}
			switch l.Machine {
			case "m1":
				keptBytes += len(l.Message)
			case "m2":
				quiet++
			}
		}
	}
	const seconds, perSecond = 10, 10
	for range seconds * perSecond {
		flood := floodBatch("m1", model.MaxLogBatch, 100, now)
		flood.Lines = append(flood.Lines[:model.MaxLogBatch-1], floodBatch("m2", 1, 10, now).Lines...)
		kept, d := m.admit(flood, now)
		dropped += d
		tally(kept)
		if kept != nil && len(kept.Lines) > model.MaxLogBatch {
			t.Fatalf("a kept batch of %d lines; a command holds %d", len(kept.Lines), model.MaxLogBatch)
		}
		now = now.Add(time.Second / perSecond)
	}
	if most := b.BatchBytes + b.BytesPerSecond*seconds; keptBytes > most || keptBytes < b.BytesPerSecond*(seconds-1) {
		t.Errorf("kept %d bytes of the flooding machine in %d s; want about its budget, at most %d", keptBytes, seconds, most)
	}
	if quiet != seconds*perSecond {
		t.Errorf("kept %d of the quiet machine's %d lines", quiet, seconds*perSecond)
	}
	// The flood stops; the flooder's next line, once its budget refilled,
	// comes after the count of what it lost.
	now = now.Add(time.Minute)
	kept, _ := m.admit(floodBatch("m1", 1, 10, now), now)
	tally(kept)
	if counted != dropped {
		t.Errorf("count lines say %d lines dropped; %d were", counted, dropped)
	}
}

// logBytesOf sums the message bytes of machine's lines in n's Raft log,
// counts aside.
func logBytesOf(t *testing.T, n *node, machine string) (int, int) {
	t.Helper()
	first, err := n.s.logs.FirstIndex()
	if err != nil {
		t.Fatal(err)
	}
	last, err := n.s.logs.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	size, entries := 0, 0
	for i := first; i <= last; i++ {
		var e raft.Log
		if err := n.s.logs.GetLog(i, &e); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if e.Type != raft.LogCommand || len(e.Data) == 0 || e.Data[0] != entryCommand {
			continue
		}
		var c model.Command
		if err := json.Unmarshal(e.Data[1:], &c); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if c.Op != model.OpLogs {
			continue
		}
		for _, l := range c.Logs.Lines {
			if _, ok := isCount(&l); !ok && l.Machine == machine {
				size += len(l.Message)
			}
		}
		entries++
	}
	return size, entries
}

// An agent flooding the debug log through all three nodes at once, in
// batches as large as a command takes, adds to the Raft log no more than
// its budget allows over the flood's time, whichever nodes it posts to;
// a writer beside it has every command applied.
func TestAFloodingAgentIsHeldToItsBudgetOnEveryNode(t *testing.T) {
	log := testLogger(t)
	budget := LogBudget{BytesPerSecond: 32 << 10, LinesPerSecond: 200, BatchBytes: 64 << 10, BatchLines: model.MaxLogBatch}
	nodes := make([]*node, 3)
	for i := range nodes {
		nodes[i] = newNode(t, log, fmt.Sprintf("n%d", i+1))
		nodes[i].budget = budget
	}
	nodes[0].start(true, nil)
	nodes[1].start(false, []string{nodes[0].httpAddr})
	nodes[2].start(false, []string{nodes[0].httpAddr})
	rafttest.Eventually(t, time.Minute, "three voters", func() error { return voters(nodes, 3) })
	leader := waitLeader(t, nodes...)
	term := leader.s.raft.CurrentTerm()
	ctx := ctxT(t, 3*time.Minute)

	const batchesPerNode = 25
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	dropped := 0
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range batchesPerNode {
				resp, err := n.s.Apply(ctx, &model.Command{Op: model.OpLogs, Logs: floodBatch("m1", model.MaxLogBatch, model.MaxLogLine, time.Now())})
				if err != nil {
					t.Errorf("flood via %s: %v", n.id, err)
					return
				}
				mu.Lock()
				dropped += resp.Dropped
				mu.Unlock()
			}
		}()
	}
	flooding := make(chan struct{})
	go func() {
		wg.Wait()
		close(flooding)
	}()
	writes := 0
	for done := false; !done; writes++ {
		select {
		case <-flooding:
			done = true
		default:
		}
		via := nodes[writes%len(nodes)]
		if _, err := via.s.Apply(ctx, machineCmd(fmt.Sprintf("w%d", writes), "10.9.0.1")); err != nil {
			t.Fatalf("write %d via %s beside the flood: %v", writes, via.id, err)
		}
	}
	elapsed := time.Since(start)
	t.Logf("writer: %d writes in %v beside the flood (%.0f/s); %d flood lines dropped", writes, elapsed.Round(time.Millisecond), float64(writes)/elapsed.Seconds(), dropped)

	if err := leader.s.Linearize(ctx); err != nil {
		t.Fatal(err)
	}
	got := machines(leader.s)
	for i := range writes {
		if got[fmt.Sprintf("w%d", i)] == "" {
			t.Fatalf("write w%d was acknowledged but is not in the state", i)
		}
	}
	// A new leader starts its budgets full: each term may add one more
	// batch's worth.
	terms := int(leader.s.raft.CurrentTerm()-term) + 1
	most := budget.BatchBytes*terms + int(float64(budget.BytesPerSecond)*elapsed.Seconds())
	for _, n := range nodes {
		size, entries := logBytesOf(t, n, "m1")
		if size > most {
			t.Errorf("%s's log holds %d bytes of the flooding machine's lines in %d entries, over %v; its budget allows %d", n.id, size, entries, elapsed, most)
		}
	}
	if offered := 3 * batchesPerNode * model.MaxLogBatch; dropped == 0 || dropped >= offered {
		t.Errorf("%d of %d flood lines dropped; want most of them", dropped, offered)
	}
}

// A count line a follower put in, dropped by the leader, goes on in the
// leader's own count: no dropped line goes uncounted.
func TestALeaderCarriesOnARelayedCount(t *testing.T) {
	b := LogBudget{BytesPerSecond: 100, LinesPerSecond: 1, BatchBytes: 100, BatchLines: 1}
	relay, leader := newLogMeter(b), newLogMeter(b)
	now := time.Unix(1_700_000_000, 0)
	// The relay takes one line and drops two; the leader is empty.
	if _, d := leader.admit(floodBatch("m1", 1, 10, now), now); d != 0 {
		t.Fatalf("the leader's first line: %d dropped", d)
	}
	kept, d := relay.admit(floodBatch("m1", 3, 10, now), now)
	if d != 2 || len(kept.Lines) != 1 {
		t.Fatalf("relay: kept %v, dropped %d; want one kept, two dropped", kept, d)
	}
	later := now.Add(2 * time.Second)
	kept, _ = relay.admit(floodBatch("m1", 1, 10, later), later)
	if n, ok := droppedCount(&kept.Lines[0]); !ok || n != 2 {
		t.Fatalf("relay's next batch starts with %+v; want a count of 2", kept.Lines[0])
	}
	// The leader has no budget left for it now: the count's 2 and the
	// line go into its own count.
	if _, d := leader.admit(kept, now); d != 2 {
		t.Fatalf("leader dropped %d lines; want 2", d)
	}
	kept, _ = leader.admit(floodBatch("m1", 1, 10, later), later)
	if n, ok := droppedCount(&kept.Lines[0]); !ok || n != 3 {
		t.Fatalf("leader's next batch starts with %+v; want a count of 3", kept.Lines[0])
	}
}

// A source that spent its budget waits until what it would post fits:
// as long as the budget takes to refill that much, at most a batch's.
func TestLogMeterSaysHowLongASourceWaits(t *testing.T) {
	b := LogBudget{BytesPerSecond: 1000, LinesPerSecond: 100, BatchBytes: 4000, BatchLines: 100}
	m := newLogMeter(b)
	now := time.Unix(1_700_000_000, 0)
	if d := m.wait("machine m1", 1<<20, 1, now); d != 0 {
		t.Fatalf("a source never seen waits %v; want 0", d)
	}
	m.admit(floodBatch("m1", 40, 100, now), now) // all 4000 bytes
	for _, c := range []struct {
		size int
		want time.Duration
	}{{500, 500 * time.Millisecond}, {1 << 20, 4 * time.Second}} {
		if d := m.wait("machine m1", c.size, 1, now); d < c.want-time.Millisecond || d > c.want+time.Millisecond {
			t.Errorf("after spending its budget, a post of %d bytes waits %v; want %v", c.size, d, c.want)
		}
	}
	if d := m.wait("machine m1", 500, 1, now.Add(time.Second)); d != 0 {
		t.Errorf("a second later, a post of 500 bytes waits %v; want 0", d)
	}
	// Lines bind as bytes do: the 60 lines spent take 0.6 s to come back
	// for a post of 100 (a batch's), whatever its bytes.
	m.admit(floodBatch("m1", 60, 1, now.Add(5*time.Second)), now.Add(5*time.Second))
	if d := m.wait("machine m1", 1, 100, now.Add(5*time.Second)); d < 599*time.Millisecond || d > 601*time.Millisecond {
		t.Errorf("after spending 60 of 100 lines, a post of 100 lines waits %v; want 0.6s", d)
	}
}

// A machine's budget is shared by its units, but what the budget drops is
// counted for the unit that lost it: the count line of a quiet unit
// beside a flooding one is that unit's, so its gap shows in its own log.
func TestLogMeterCountsEachUnitsDrops(t *testing.T) {
	b := LogBudget{BytesPerSecond: 1000, LinesPerSecond: 10, BatchBytes: 4000, BatchLines: 20}
	m := newLogMeter(b)
	now := time.Unix(1_700_000_000, 0)
	batch := floodBatch("m1", 30, 10, now)
	for i := range batch.Lines {
		batch.Lines[i].Unit = "flood/0"
	}
	batch.Lines[25].Unit = "chatty/1"
	if _, d := m.admit(batch, now); d != 10 {
		t.Fatalf("dropped %d of 30 lines over a 20-line batch budget; want 10", d)
	}
	later := now.Add(2 * time.Second)
	kept, _ := m.admit(floodBatch("m1", 1, 10, later), later)
	counts := map[string]int{}
	for i := range kept.Lines {
		if n, ok := isCount(&kept.Lines[i]); ok {
			if err := kept.Lines[i].Check(); err != nil {
				t.Fatalf("count line %+v: %v", kept.Lines[i], err)
			}
			counts[kept.Lines[i].Unit] += n
		}
	}
	if counts["flood/0"] != 9 || counts["chatty/1"] != 1 || len(counts) != 2 {
		t.Fatalf("counts by unit %v; want flood/0's 9 and chatty/1's 1", counts)
	}
}
