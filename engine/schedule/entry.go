package schedule

import "time"

// Entry is what the caller holds of one queued or claimed unit besides
// the queue: its view and its claim. Queue.Choose turns it into the
// unit's Candidate, if it is one now.
type Entry struct {
	// Known says the unit has a view; without one it is nobody's
	// candidate.
	Known   bool
	Hash    string
	Machine string
	Member  bool
	// Moved: see Candidate.
	Moved bool
	// Claimed says it was handed out, and not reported, until Until;
	// Timer that the claim is an update-status run, which holds no wave
	// back.
	Claimed bool
	Until   time.Time
	Timer   bool
}

// Lookup returns what the caller holds of unit. It is called with the
// caller's lock held and must not change the queue.
type Lookup func(unit string) Entry

// slot is where a unit stands towards Choose at a time: a candidate
// (ok), or not one, in which case wait is when its queue time comes and
// timerClaim says its update-status claim keeps it out.
type slot struct {
	cand       Candidate
	ok         bool
	wait       time.Time
	timerClaim bool
}

// slotOf derives unit's slot at now from what the caller holds of it (e)
// and its place in the queue (queued, from at): a claim in its lease makes
// it a running candidate, unless the claim is an update-status run, and
// otherwise a queued unit is a candidate once its time has come.
func slotOf(unit string, e Entry, queued bool, at, now time.Time) slot {
	if !e.Known {
		return slot{}
	}
	c := Candidate{Name: unit, Hash: e.Hash, Machine: e.Machine, Member: e.Member}
	switch {
	case e.Claimed && now.Before(e.Until):
		if e.Timer {
			return slot{timerClaim: true}
		}
		c.Claimed = true
		return slot{cand: c, ok: true}
	case !queued:
		return slot{}
	case now.Before(at):
		return slot{wait: at}
	}
	c.Moved = e.Moved
	return slot{cand: c, ok: true}
}
