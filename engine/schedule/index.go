package schedule

import (
	"container/heap"
	"iter"
	"time"

	"github.com/fixpoint/fixpoint/model"
)

// waveIndex is the queue's index by wave and by machine, in unit order
// (machineOrder), so that a hand-out walks its machine's queued units in
// order only as far as it takes units, and never every queued and
// claimed unit: a walk per hand-out would make a convergence cost the
// square of the units.
//
// It keeps a heap of (wave, unit) with this invariant: every unit that
// holds a wave back (standOf: running or ready) has an entry whose wave is
// no more than its own. The lowest wave is then the top entry's, once the
// top unit has been checked against the rule: one whose wave rose goes
// back in at its wave, one that holds no wave any more leaves. A unit's
// wave only rises but for an operator change (Rewave). A unit that holds
// no wave may come to hold one:
//   - when its time comes (its queue time, a retry): the timed heap brings
//     it back then;
//   - when it is re-queued or forgotten, or the caller's view, claim or
//     the state of it moves: queue operations and the caller's Touch mark
//     it fresh, to be looked at before the next answer;
//   - when its update-status claim ends, early or at its lease: such
//     units, a handful (one per hook in flight), are looked at on every
//     Choose.
//
// Stale heap entries are dropped when they come to the top.
type waveIndex struct {
	// fresh are the units to look at before the next answer.
	fresh map[string]struct{}
	// held is the wave of each unit's live entry in waves.
	held  map[string]int
	waves waveHeap
	// timedAt is the time of each unit's live entry in timed.
	timedAt map[string]time.Time
	timed   timeHeap
	// watched are the units kept out only by an update-status claim.
	watched map[string]struct{}
	// placed is the machine each queued unit is listed under in machines.
	placed   map[string]string
	machines map[string]map[string]struct{}
	// order keeps each machine's listed units in unit order (order.go).
	order map[string]*machineOrder
}

func newWaveIndex() waveIndex {
	return waveIndex{fresh: map[string]struct{}{}, held: map[string]int{}, timedAt: map[string]time.Time{},
		watched: map[string]struct{}{}, placed: map[string]string{}, machines: map[string]map[string]struct{}{},
		order: map[string]*machineOrder{}}
}

// Choose is Choose for machine over the queued units and the claimed ones,
// as look describes them at now, from the index: it costs the machine's
// queued units and the units whose standing moved since the last call. Its
// Next also counts the machine's queued units that wait for their time
// (unless the machine is lost).
func (q *Queue) Choose(st *model.State, machine string, now time.Time, look Lookup) Choice {
	ch, run := q.ChooseInOrder(st, machine, now, look)
	for unit := range run {
		ch.Run = append(ch.Run, unit)
	}
	return *ch
}

// ChooseInOrder is Choose with Run left out: the iterator yields Run's
// units in charmapi.UnitLess order, walking the machine's queued units in
// that order only as far as it is read, so that a poll that takes a few
// units costs no walk of its machine's whole queue. The Choice's Next
// counts every unit once the iterator has run to its end; a caller that
// stops early has taken work and reads no Next. The iterator may be
// ranged over once, before the queue's next Choose.
func (q *Queue) ChooseInOrder(st *model.State, machine string, now time.Time, look Lookup) (*Choice, iter.Seq[string]) {
	x := &q.index
	x.catchUp(q, st, now, look)
	ch := &Choice{Wave: x.lowest(q, st, now, look)}
	lost := Lost(st, machine)
	units := x.inOrder(machine)
	g := gather{machine: machine}
	return ch, func(yield func(string) bool) {
		defer func() { ch.Next = g.ch.Next }()
		for _, k := range units {
			unit := k.name
			if x.placed[unit] != machine {
				// Taken off since the order was made.
				continue
			}
			e := look(unit)
			at, queued := q.items[unit]
			if e.Machine != machine {
				continue
			}
			switch s := slotOf(unit, e, queued, at, now); {
			case s.ok:
				switch sd := standOf(st, s.cand, now); sd.standing {
				case ready:
					if sd.wave == ch.Wave && !yield(unit) {
						return
					}
				case timerRetry:
					if !yield(unit) {
						return
					}
				case waiting:
					g.wait(sd.retry)
				}
			case !s.wait.IsZero() && !lost:
				g.wait(s.wait)
			}
		}
	}
}

// Touch says something the queue does not see moved for unit (its view,
// its claim, its record in the state): Choose looks at it again.
func (q *Queue) Touch(unit string) { q.index.fresh[unit] = struct{}{} }

// Rewave says every unit's wave may have gone down (an operator change
// started new waves): Choose looks at every unit again.
func (q *Queue) Rewave() {
	x := &q.index
	for unit := range q.items {
		x.fresh[unit] = struct{}{}
	}
	for unit := range x.held {
		x.fresh[unit] = struct{}{}
	}
	x.waves = nil
	clear(x.held)
}

// catchUp files the units whose time came, the watched ones and the fresh
// ones.
func (x *waveIndex) catchUp(q *Queue, st *model.State, now time.Time, look Lookup) {
	for len(x.timed) > 0 && !now.Before(x.timed[0].at) {
		t := heap.Pop(&x.timed).(timedEntry)
		if at, ok := x.timedAt[t.unit]; ok && at.Equal(t.at) {
			delete(x.timedAt, t.unit)
			x.fresh[t.unit] = struct{}{}
		}
	}
	for unit := range x.watched {
		x.fresh[unit] = struct{}{}
	}
	clear(x.watched)
	for unit := range x.fresh {
		e := look(unit)
		at, queued := q.items[unit]
		if queued && e.Known {
			x.list(unit, e.Machine)
		} else {
			x.unlist(unit)
		}
		x.file(st, unit, slotOf(unit, e, queued, at, now), now)
	}
	clear(x.fresh)
}

// lowest is the lowest wave held back, or -1: the top of the heap once it
// is checked.
func (x *waveIndex) lowest(q *Queue, st *model.State, now time.Time, look Lookup) int {
	for len(x.waves) > 0 {
		top := x.waves[0]
		if w, ok := x.held[top.unit]; !ok || w != top.wave {
			heap.Pop(&x.waves) // stale
			continue
		}
		at, queued := q.items[top.unit]
		s := slotOf(top.unit, look(top.unit), queued, at, now)
		if s.ok {
			if sd := standOf(st, s.cand, now); sd.holds() && sd.wave == top.wave {
				return top.wave
			}
		}
		heap.Pop(&x.waves)
		delete(x.held, top.unit)
		x.file(st, top.unit, s, now)
	}
	return -1
}

// file keeps unit, whose slot at now is s, where it will be found again
// should it hold a wave: in the wave heap if it holds one, in the timed
// heap if time alone may make it hold one, among the watched if only an
// update-status claim keeps it out; nowhere if only a change can.
func (x *waveIndex) file(st *model.State, unit string, s slot, now time.Time) {
	switch {
	case s.timerClaim:
		x.watched[unit] = struct{}{}
	case !s.ok:
		if !s.wait.IsZero() {
			x.at(unit, s.wait)
		}
	default:
		switch sd := standOf(st, s.cand, now); {
		case sd.holds():
			if w, ok := x.held[unit]; !ok || sd.wave < w {
				x.held[unit] = sd.wave
				heap.Push(&x.waves, waveEntry{sd.wave, unit})
			}
		case sd.standing == waiting:
			x.at(unit, sd.retry)
		}
	}
}

// at brings unit back to be looked at at t.
func (x *waveIndex) at(unit string, t time.Time) {
	if cur, ok := x.timedAt[unit]; ok && !t.Before(cur) {
		return
	}
	x.timedAt[unit] = t
	heap.Push(&x.timed, timedEntry{t, unit})
}

// list lists queued unit under machine.
func (x *waveIndex) list(unit, machine string) {
	if m, ok := x.placed[unit]; ok {
		if m == machine {
			return
		}
		x.unlist(unit)
	}
	set := x.machines[machine]
	if set == nil {
		set = map[string]struct{}{}
		x.machines[machine] = set
	}
	set[unit] = struct{}{}
	x.placed[unit] = machine
	o := x.order[machine]
	if o == nil {
		o = &machineOrder{}
		x.order[machine] = o
	}
	o.added = append(o.added, keyOf(unit))
}

// unlist takes unit off its machine's list.
func (x *waveIndex) unlist(unit string) {
	m, ok := x.placed[unit]
	if !ok {
		return
	}
	delete(x.machines[m], unit)
	if len(x.machines[m]) == 0 {
		delete(x.machines, m)
		delete(x.order, m)
	} else if o := x.order[m]; o != nil {
		o.stale++
	}
	delete(x.placed, unit)
}

// waveEntry is a unit in the wave heap.
type waveEntry struct {
	wave int
	unit string
}

// waveHeap is a min-heap of waves (container/heap).
type waveHeap []waveEntry

func (h waveHeap) Len() int           { return len(h) }
func (h waveHeap) Less(i, j int) bool { return h[i].wave < h[j].wave }
func (h waveHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *waveHeap) Push(x any)        { *h = append(*h, x.(waveEntry)) }
func (h *waveHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// timedEntry is a unit in the timed heap.
type timedEntry struct {
	at   time.Time
	unit string
}

// timeHeap is a min-heap of times (container/heap).
type timeHeap []timedEntry

func (h timeHeap) Len() int           { return len(h) }
func (h timeHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h timeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timeHeap) Push(x any)        { *h = append(*h, x.(timedEntry)) }
func (h *timeHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
