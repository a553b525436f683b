package engine

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHistoryKeepsRunsAsAdded: every run reads back as the JSON it was
// added as, whether the history keeps it in its compact form or, having
// something that form has no place for, whole.
func TestHistoryKeepsRunsAsAdded(t *testing.T) {
	now := time.Now()
	hash := "16e4540d0d3fd2ee487dd7c48448542b"
	many := make([]Change, 70)
	for i := range many {
		many[i] = Change{Key: "state.k" + strconv.Itoa(i), Old: "(unset)", New: strconv.Quote(strconv.Itoa(i)), Secret: i%3 == 0}
	}
	runs := []Run{
		{Unit: "web/0", Service: "web", Time: now, Hash: hash, Duration: 40 * time.Millisecond, Outcome: RunOK, Changes: []Change{
			{Key: "status", Old: `"waiting: installing"`, New: `"active"`},
			{Key: "relations.db:1.local.password", Old: "(unset)", New: `"pw"`, Secret: true},
			{Key: "relations.cluster:0.local.peers", Old: "(unset)", New: strconv.Quote(strings.Repeat("web/1 ", 40))},
			{Key: "relations.db:1.units.db/0.host", Old: "(unset)", New: `"10.0.0.1"`, Writer: "db/0"},
		}},
		{Unit: "web/0", Service: "web", Time: now.UTC(), Hash: hash, Outcome: RunError, Error: "hook reconcile exited with status 1", Stderr: "boom"},
		{Unit: "web/0", Service: "web", Time: now.Round(0), Outcome: RunStale},
		{Unit: "web/0", Service: "web", Outcome: RunOK, Changes: many[:maxRunChanges], Omitted: 30},
		{Unit: "web/0", Service: "web", Time: now, Hash: hash, Outcome: RunOK, Changes: many},
		{Unit: "web/0", Service: "web"},
		// Kept whole: each has something the compact form has no place for.
		{Unit: "web/0", Service: "web", Time: now.In(time.FixedZone("X", 3600)), Hash: hash, Outcome: RunOK},
		{Unit: "web/0", Service: "web", Time: time.Time{}.In(time.Local), Outcome: RunOK},
		{Unit: "web/0", Service: "web", Time: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), Outcome: RunOK},
		{Unit: "web/0", Service: "web", Time: now, Hash: strings.ToUpper(hash), Outcome: RunOK},
		{Unit: "web/0", Service: "web", Time: now, Hash: "nope", Outcome: RunOK, Changes: many[:2]},
		{Unit: "web/0", Service: "web", Time: now, Hash: hash + "0", Outcome: RunOK},
		{Unit: "web/0", Service: "web", Time: now, Hash: hash, Outcome: "interrupted"},
		{Unit: "web/0", Service: "db", Time: now, Hash: hash, Outcome: RunOK},
		{Unit: "web/0", Time: now, Hash: hash, Outcome: RunOK, Error: "e", Stderr: "s", Omitted: 1},
		{Unit: "web", Service: "web", Time: now, Hash: hash, Outcome: RunOK},
	}
	var want []string
	h := NewHistory(len(runs))
	for i := range runs {
		h.Add(runs[i])
		runs[i].Seq = uint64(i + 1)
		b, err := json.Marshal(runs[i])
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, string(b))
	}
	got, _ := h.Runs("", 0)
	if len(got) != len(runs) {
		t.Fatalf("%d runs read back; want %d", len(got), len(runs))
	}
	for i, r := range got {
		b, _ := json.Marshal(r)
		if string(b) != want[i] {
			t.Errorf("run %d reads back as\n%s\nwant\n%s", i, b, want[i])
		}
		// What a read returns is the reader's: writing into it changes
		// no later read.
		for j := range r.Changes {
			r.Changes[j].New = "written"
		}
	}
	again, _ := h.Runs("", 0)
	for i, r := range again {
		if b, _ := json.Marshal(r); string(b) != want[i] {
			t.Errorf("run %d reads back changed by a reader: %s", i, b)
		}
	}
}

// TestHistoryRunsAfterRoundTheRing: units' runs added in any order,
// wrapping their rings any number of times, are read back oldest first,
// each unit's last max, for every filter and every after.
func TestHistoryRunsAfterRoundTheRing(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		max := 1 + rng.IntN(6)
		h := NewHistory(max)
		units := []string{"a/0", "a/1", "b/0", "b/10"}
		var all []Run
		for range rng.IntN(60) {
			batch := make([]Run, 1+rng.IntN(3))
			for i := range batch {
				u := units[rng.IntN(len(units))]
				batch[i] = Run{Unit: u, Service: u[:1], Outcome: RunOK, Duration: time.Duration(rng.IntN(1000))}
			}
			h.Add(batch...)
			all = append(all, batch...)
		}
		for _, filter := range []string{"", "a", "b/10", "c"} {
			for after := uint64(0); after <= uint64(len(all))+1; after++ {
				var want []Run
				kept := map[string]int{}
				for i := len(all) - 1; i >= 0; i-- {
					r := all[i]
					if kept[r.Unit]++; kept[r.Unit] <= max && Match(filter, r.Unit) && r.Seq > after {
						want = append([]Run{r}, want...)
					}
				}
				got, seq := h.Runs(filter, after)
				if seq != uint64(len(all)) {
					t.Fatalf("seed %d: seq %d after %d runs", seed, seq, len(all))
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("seed %d, max %d, Runs(%q, %d):\n%v\nwant\n%v", seed, max, filter, after, got, want)
				}
			}
		}
	}
}

// TestHistorySharesRepeatedChanges: units that make the same change of
// short strings hold one copy of it, a change with a long value is its
// run's own, and the table of shared changes stays bounded however many
// changes charms make up.
func TestHistorySharesRepeatedChanges(t *testing.T) {
	h := NewHistory(0)
	long := strconv.Quote(strings.Repeat("x", maxShared))
	run := func(unit string) Run {
		return Run{Unit: unit, Service: "a", Outcome: RunOK, Changes: []Change{
			{Key: "status", Old: strconv.Quote("waiting: " + "installing"), New: strconv.Quote("active")},
			{Key: "state." + "blob", New: strings.Clone(long)},
		}}
	}
	h.Add(run("a/0"), run("a/1"))
	h.mu.Lock()
	x, y := h.units["a/0"][0].changes, h.units["a/1"][0].changes
	h.mu.Unlock()
	if x[0] != y[0] {
		t.Error("two runs that make the same change hold their own copies of it; want one shared")
	}
	if x[1] == y[1] {
		t.Error("a change with a long value is shared; want it each run's own")
	}
	for i := range 3 * maxSharedN {
		h.Add(Run{Unit: "a/0", Service: "a", Changes: []Change{{Key: "state.k", New: strconv.Itoa(i)}}})
	}
	h.mu.Lock()
	n := len(h.sharedChanges)
	h.mu.Unlock()
	if n > maxSharedN {
		t.Errorf("the history shares %d changes; want at most %d", n, maxSharedN)
	}
}

// TestHistoryRingGrowsToItsBound: a unit's ring has places for about the
// runs it holds, and never more than the bound's size class allows.
func TestHistoryRingGrowsToItsBound(t *testing.T) {
	h := NewHistory(DefaultHistory)
	for n := 1; n <= 3*DefaultHistory; n++ {
		h.Add(Run{Unit: "a/0", Service: "a"})
		h.mu.Lock()
		l, c := len(h.units["a/0"]), cap(h.units["a/0"])
		h.mu.Unlock()
		if l != min(n, DefaultHistory) || c > l+1+l/4 {
			t.Fatalf("after %d runs the ring holds %d in %d places", n, l, c)
		}
	}
}

// TestHistoryReadsWhileRunsAreAdded: reads made while runs are added see
// each unit's last runs, oldest first, never more than the bound, and
// every change as it was added.
func TestHistoryReadsWhileRunsAreAdded(t *testing.T) {
	const max = 4
	h := NewHistory(max)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 2000 {
			u := fmt.Sprintf("a/%d", i%3)
			h.Add(Run{Unit: u, Service: "a", Outcome: RunOK, Changes: []Change{{Key: "state.n", New: strconv.Itoa(i)}}})
		}
	}()
	for reading := true; reading; {
		select {
		case <-done:
			reading = false
		default:
		}
		runs, seq := h.Runs("a", 0)
		per := map[string]int{}
		for i, r := range runs {
			if per[r.Unit]++; per[r.Unit] > max || r.Seq > seq || (i > 0 && r.Seq <= runs[i-1].Seq) {
				t.Fatalf("a read of %d runs up to seq %d: run %d is %+v", len(runs), seq, i, r)
			}
			if len(r.Changes) != 1 || r.Changes[0].New != strconv.FormatUint(r.Seq-1, 10) {
				t.Fatalf("run %d changed %+v", r.Seq, r.Changes)
			}
		}
	}
}
