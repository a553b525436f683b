package model

// What records cost in memory: the estimates the bounded stores
// (bounded.go) count against their caps, so that a store's cap is a
// bound on the Go heap it holds, not on the text of its records. They
// are upper estimates for 64-bit platforms and constants, never measured
// at run time, so that every replica, whatever its platform, counts the
// same and keeps exactly the same records. The budget each structure
// keeps per unit is in docs/memory.md.

// StringCost is what the bytes of a string of n bytes take on the heap:
// the allocator's size classes are 16 bytes apart up to 256 bytes and at
// most an eighth apart above, so n rounded up to 16, plus an eighth past
// 256. An empty string takes nothing.
func StringCost(n int) int {
	if n <= 0 {
		return 0
	}
	c := (n + 15) &^ 15
	if n > 256 {
		c += n / 8
	}
	return c
}

// Slot costs: one record's place in a store's ring, its struct and its
// size (an int), on a 64-bit platform. TestSlotCostsCoverTheStructs holds
// them to unsafe.Sizeof.
const (
	eventSlot = 96 + 8
	logSlot   = 128 + 8
)

// ringCost is one key's ring beside its records: the ring itself, its
// entry in the store's map and heap (with their spare capacity), and
// its key's bytes.
func ringCost(key string) int { return 256 + StringCost(len(key)) }

// eventCost is an event's bytes beyond its slot: its strings (a kind is
// a constant when derived, but its own bytes once read from a snapshot).
func eventCost(e *Event) int {
	return StringCost(len(e.Env)) + StringCost(len(e.Unit)) + StringCost(len(e.Kind)) + StringCost(len(e.Message))
}

// logLineCost is a debug-log line's bytes beyond its slot: its strings.
func logLineCost(l *LogLine) int {
	return StringCost(len(l.Unit)) + StringCost(len(l.Env)) + StringCost(len(l.Machine)) + StringCost(len(l.Node)) +
		StringCost(len(l.Level)) + StringCost(len(l.Origin)) + StringCost(len(l.Message))
}
