package model

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// TestSlotCostsCoverTheStructs holds the slot constants to the structs
// they stand for, on a 64-bit platform, and a ring's fixed cost to the
// ring, its map entry and its heap place.
func TestSlotCostsCoverTheStructs(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the costs are for 64-bit platforms; a 32-bit one holds less")
	}
	if got := int(unsafe.Sizeof(Event{}) + unsafe.Sizeof(0)); got > eventSlot {
		t.Errorf("an event's slot costs %d, counted as %d", got, eventSlot)
	}
	if got := int(unsafe.Sizeof(LogLine{}) + unsafe.Sizeof(0)); got > logSlot {
		t.Errorf("a log line's slot costs %d, counted as %d", got, logSlot)
	}
	// The ring, a map entry (key, pointer, control byte) at twice its
	// size for the map's spare room, a heap place at twice its size.
	if got := int(unsafe.Sizeof(ring[Event]{})) + 2*(16+8+1) + 2*8; got > ringCost("") {
		t.Errorf("a ring costs %d, counted as %d", got, ringCost(""))
	}
	for n, want := range map[int]int{0: 0, 1: 16, 16: 16, 17: 32, 256: 256, 257: 272 + 32, 1024: 1024 + 128} {
		if got := StringCost(n); got != want {
			t.Errorf("StringCost(%d) = %d; want %d", n, got, want)
		}
	}
}

// heapOf is how much the live heap grows by what fill makes and keeps.
func heapOf(fill func() any) (uint64, any) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := fill()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return after.HeapAlloc - before.HeapAlloc, kept
}

// TestFullStoresHeapWithinTheirBounds fills the event store and the
// debug log far past their caps with records as the FSM makes them (each
// string its own allocation, as formatting or decoding a snapshot gives)
// over many units, and reads the Go heap they retain: within the cap,
// with a tolerance of a tenth for the allocator's rounding of the rings'
// arrays to its size classes. A store that counted its records' text
// held several times its cap.
func TestFullStoresHeapWithinTheirBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("fills the event store and the debug log to their caps")
	}
	const units = 20000
	grown, kept := heapOf(func() any {
		s := NewEventStore()
		for round := range 12 {
			batch := make([]Event, 0, units)
			for u := range units {
				unit := fmt.Sprintf("svc%d/%d", u%200, u)
				batch = append(batch, Event{Index: uint64(round), Time: 1, Unit: unit, Kind: strings.Clone(EventSucceeded),
					Message: fmt.Sprintf("hook run started on universe %012x", round*units+u)})
			}
			s.Add(batch)
		}
		return s
	})
	st := kept.(*Bounded[Event]).Stats()
	t.Logf("events: %d kept, counted %d bytes, heap %d bytes, cap %d", st.Records, st.Bytes, grown, EventBytesTotal)
	if st.Bytes > EventBytesTotal || grown > EventBytesTotal+EventBytesTotal/10 {
		t.Errorf("a full event store counts %d bytes and holds %d of heap; its cap is %d", st.Bytes, grown, EventBytesTotal)
	}
	if st.Records == 0 || grown < uint64(st.Bytes)/2 {
		t.Errorf("the count (%d bytes) is far above the heap it stands for (%d)", st.Bytes, grown)
	}
	runtime.KeepAlive(kept)

	grown, kept = heapOf(func() any {
		s := NewLogStore()
		for round := range 8 {
			batch := make([]LogLine, 0, units)
			for u := range units {
				batch = append(batch, LogLine{Time: 1, Unit: fmt.Sprintf("svc%d/%d", u%200, u), Machine: fmt.Sprintf("m%d", u%50),
					Level: strings.Clone("info"), Origin: strings.Clone(OriginHook), Message: fmt.Sprintf("line %d of round %d: %s", u, round, strings.Repeat("x", u%100))})
			}
			s.Add(batch)
		}
		return s
	})
	st = kept.(*Bounded[LogLine]).Stats()
	t.Logf("log lines: %d kept, counted %d bytes, heap %d bytes, cap %d", st.Records, st.Bytes, grown, LogBytesTotal)
	if st.Bytes > LogBytesTotal || grown > LogBytesTotal+LogBytesTotal/10 {
		t.Errorf("a full debug log counts %d bytes and holds %d of heap; its cap is %d", st.Bytes, grown, LogBytesTotal)
	}
	runtime.KeepAlive(kept)
}
