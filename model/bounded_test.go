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

func lineSize(l LogLine) int { return len(l.Message) + len(l.Unit) + logOverhead }

// A source's lines beyond its cap drop oldest first, and the others'
// lines stay: a flood from one unit costs only that unit's history.
func TestBoundedDropsOldestOfTheFloodingKey(t *testing.T) {
	one := lineSize(line("web/0", "0123456789"))
	b := NewBounded(10*one, 100*one, NewLogStore().measure, NewLogStore().stamp, NewLogStore().seq)
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
	if len(got) != 11 || got[0].Unit != "db/0" {
		t.Fatalf("kept %d lines, first %+v; want db/0's line and web/0's last 10", len(got), got[0])
	}
	if got[1].Message != "0000000990" || got[10].Message != "0000000999" {
		t.Fatalf("web/0 kept %q..%q; want its last ten", got[1].Message, got[10].Message)
	}
	want := 10*one + lineSize(line("db/0", "quiet-line"))
	if st := b.Stats(); st.Bytes != want || st.Dropped != 990 {
		t.Fatalf("stats %+v; want %d bytes, 990 dropped", st, want)
	}
}

// Past the total cap, the oldest line of all goes first, whichever
// source it is from.
func TestBoundedTotalCapDropsOldestOverall(t *testing.T) {
	one := lineSize(line("a/0", "x"))
	b := NewBounded(100*one, 5*one, NewLogStore().measure, NewLogStore().stamp, NewLogStore().seq)
	for i, u := range []string{"a/0", "b/0", "a/0", "c/0", "b/0", "c/0", "a/0"} {
		b.Add([]LogLine{line(u, fmt.Sprint(i))})
	}
	got, _ := b.Read(0, nil, nil, 0, false)
	var msgs []string
	for _, l := range got {
		msgs = append(msgs, l.Message)
	}
	if strings.Join(msgs, ",") != "2,3,4,5,6" {
		t.Fatalf("kept %v; want the five newest 2..6", msgs)
	}
	if st := b.Stats(); st.Bytes > 5*one || st.Records != 5 {
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
	b := NewBounded(4<<10, 16<<10, NewLogStore().measure, NewLogStore().stamp, NewLogStore().seq)
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
