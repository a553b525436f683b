package model

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func line(unit, msg string) LogLine {
	return LogLine{Time: 1, Unit: unit, Level: "info", Origin: OriginHook, Message: msg}
}

// newLogs is a debug-log store with the given caps.
func newLogs(perKey, total int) *Bounded[LogLine] {
	s := NewLogStore()
	return NewBounded(perKey, total, logSlot, s.measure, s.stamp, s.seq)
}

// recount is what b holds, counted afresh from its rings: what its
// running count must equal.
func recount[T any](b *Bounded[T]) int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	n := 0
	for key, r := range b.rings {
		n += ringCost(key) + cap(r.items)*b.slot
		for _, s := range r.sizes[r.head:] {
			n += s
		}
	}
	return n
}

// A source's lines beyond its cap drop oldest first, and the others'
// lines stay: a flood from one unit costs only that unit's history.
func TestBoundedDropsOldestOfTheFloodingKey(t *testing.T) {
	b := newLogs(8<<10, 1<<20)
	b.Add([]LogLine{line("db/0", "quiet-line")})
	var flood []LogLine
	for i := range 1000 {
		flood = append(flood, line("web/0", fmt.Sprintf("%010d", i)))
	}
	b.Add(flood)
	got, last := b.Read(0, nil, nil, 0, false)
	if last != 1001 {
		t.Fatalf("last seq %d; want 1001", last)
	}
	if len(got) < 10 || got[0].Unit != "db/0" {
		t.Fatalf("kept %d lines, first %+v; want db/0's line and web/0's last ones", len(got), got[0])
	}
	kept := len(got) - 1
	if got[1].Message != fmt.Sprintf("%010d", 1000-kept) || got[kept].Message != "0000000999" {
		t.Fatalf("web/0 kept %q..%q; want its last %d", got[1].Message, got[kept].Message, kept)
	}
	if st := b.Stats(); st.Bytes != recount(b) || st.Dropped != uint64(1000-kept) {
		t.Fatalf("stats %+v; want %d bytes, %d dropped", st, recount(b), 1000-kept)
	}
	b.mu.RLock()
	web := b.rings["web/0"].bytes
	b.mu.RUnlock()
	if web > 8<<10 {
		t.Fatalf("web/0 holds %d bytes over its cap", web)
	}
}

// Past the total cap, the oldest line of all goes first, whichever
// source it is from.
func TestBoundedTotalCapDropsOldestOverall(t *testing.T) {
	l := line("u0/0", "x")
	one := ringCost("u0/0") + minRing*logSlot + logLineCost(&l)
	b := newLogs(100*one, 5*one)
	for i := range 7 {
		b.Add([]LogLine{line(fmt.Sprintf("u%d/0", i), fmt.Sprint(i))})
	}
	got, _ := b.Read(0, nil, nil, 0, false)
	var msgs []string
	for _, l := range got {
		msgs = append(msgs, l.Message)
	}
	if strings.Join(msgs, ",") != "2,3,4,5,6" {
		t.Fatalf("kept %v; want the five newest 2..6", msgs)
	}
	if st := b.Stats(); st.Bytes > 5*one || st.Records != 5 || st.Bytes != recount(b) {
		t.Fatalf("stats %+v over the cap of %d", st, 5*one)
	}
}

// Read resumes after a sequence number, pages forward, and tails.
func TestBoundedReadAfterLimitTail(t *testing.T) {
	b := NewLogStore()
	for i := range 20 {
		b.Add([]LogLine{line(fmt.Sprintf("u%d/0", i%3), fmt.Sprint(i))})
	}
	page, next := b.Read(5, nil, nil, 4, false)
	if len(page) != 4 || page[0].Seq != 6 || next != 9 {
		t.Fatalf("page after 5: %d lines from %d, next %d; want 4 from 6, next 9", len(page), page[0].Seq, next)
	}
	tail, last := b.Read(0, func(k string) bool { return k == "u1/0" }, nil, 2, true)
	if len(tail) != 2 || tail[0].Message != "16" || tail[1].Message != "19" || last != 20 {
		t.Fatalf("tail of u1/0: %+v, last %d", tail, last)
	}
}

// A dump loaded elsewhere holds the same lines with the same numbers,
// and numbering goes on after them: a restored node resumes the same log.
func TestBoundedDumpLoad(t *testing.T) {
	a := NewLogStore()
	for i := range 10 {
		a.Add([]LogLine{line("web/0", fmt.Sprint(i))})
	}
	b := NewLogStore()
	b.Load(a.Dump())
	a.Add([]LogLine{line("web/1", "next")})
	b.Add([]LogLine{line("web/1", "next")})
	ga, _ := a.Read(0, nil, nil, 0, false)
	gb, _ := b.Read(0, nil, nil, 0, false)
	if fmt.Sprint(ga) != fmt.Sprint(gb) {
		t.Fatalf("loaded store differs:\n%v\n%v", ga, gb)
	}
}

// Readers and the one writer run at once (go test -race).
func TestBoundedConcurrentReaders(t *testing.T) {
	b := newLogs(4<<10, 16<<10)
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var after uint64
			for {
				select {
				case <-done:
					return
				case <-b.Changed():
				}
				got, last := b.Read(after, nil, nil, 100, false)
				for i := 1; i < len(got); i++ {
					if got[i].Seq <= got[i-1].Seq {
						t.Errorf("read out of order: %d after %d", got[i].Seq, got[i-1].Seq)
					}
				}
				after = last
				_ = b.Stats()
			}
		}()
	}
	for i := range 2000 {
		b.Add([]LogLine{line(fmt.Sprintf("s%d/0", i%7), strings.Repeat("x", i%50))})
	}
	close(done)
	wg.Wait()
	if st := b.Stats(); st.Bytes > 16<<10 {
		t.Fatalf("%d bytes kept over the 16 KiB cap", st.Bytes)
	}
}
