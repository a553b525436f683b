package engine

import (
	"cmp"
	"encoding/hex"
	"slices"
	"sort"
	"time"

	"github.com/fixpoint/fixpoint/model"
)

// Outcomes of a run in the history.
const (
	RunOK    = "ok"    // the result was taken
	RunError = "error" // the hook failed or returned a bad result
	RunStale = "stale" // the universe moved on while the hook ran; it runs again
)

// Run is one hook run of a unit, as the leader's controller accepted it.
type Run struct {
	// Seq orders runs across all units; followers of the history ask for
	// runs after the last Seq they saw.
	Seq     uint64    `json:"seq"`
	Unit    string    `json:"unit"`
	Service string    `json:"service"`
	Time    time.Time `json:"time"`
	// Hash is the universe the hook was given.
	Hash     string        `json:"hash"`
	Duration time.Duration `json:"duration"`
	Outcome  string        `json:"outcome"`
	Error    string        `json:"error,omitempty"`
	// Changes is what the result changed in the unit's own settings,
	// status, state, ports and (as leader) its service's bags.
	Changes []Change `json:"changes,omitempty"`
	// Omitted counts changes left out of Changes to keep the run small.
	Omitted int `json:"omitted,omitempty"`
	// Stderr is the tail of the hook's standard error.
	Stderr string `json:"stderr,omitempty"`
}

// keptRun is a Run as the history holds it. Runs are read far less often
// than they are added, so a kept run holds what only it knows, in fixed
// size where it can, and the Run a reader sees is made from it on each
// read (runsOf): the unit is its ring's key and the service is the unit's
// (model.ServiceOf), the time Unix nanoseconds, the hash its bytes, the
// outcome a number, each change the history's shared copy where runs
// repeat it. A run with something that has no such form is kept whole
// beside it (keptMore.whole), so that every Run read back marshals as the
// Run that was added.
type keptRun struct {
	seq uint64
	// at is Time as Unix nanoseconds, in the location flags say.
	at  int64
	dur time.Duration
	// hash is Hash decoded when flags has keptHashHex.
	hash [hashBytes]byte
	// changes are never written once kept: the history's shared ones
	// are in other runs too.
	changes []*Change
	more    *keptMore
	outcome keptOutcome
	flags   uint8
}

// keptMore is the part of a kept run most runs leave empty.
type keptMore struct {
	err, stderr string
	omitted     int
	// whole, when set, is the run as it was added but its Seq and
	// Changes, which the kept run holds, and the kept run's other
	// fields say nothing.
	whole *Run
}

// hashBytes is the size of a universe's hash (Hash): its hex is twice as
// long.
const hashBytes = 16

// Bits of keptRun.flags. A kept run's time is Local, UTC or zero, and its
// hash hex or empty; any other is kept whole.
const (
	keptLocal   = 1 << iota // Time is in time.Local
	keptUTC                 // Time is in time.UTC
	keptHashHex             // Hash is hex of keptRun.hash
)

// keptOutcome is a Run's Outcome as a number; the zero one is "".
type keptOutcome uint8

var outcomes = [...]string{"", RunOK, RunError, RunStale}

// unitRuns is one unit's kept runs, in a ring: while it holds fewer than
// the history's bound it is in seq order from index 0, and once full it is
// in seq order from its oldest run, where the next run goes (head). Its
// slice grows a place or a quarter at a time up to the bound, so a unit
// that ran a few times holds places for about that many.
type unitRuns []keptRun

// head is the index of u's oldest run: runs' seqs rise from it, round the
// ring, so it is the first place whose seq is below that of place 0, or 0.
func (u unitRuns) head() int {
	if len(u) == 0 {
		return 0
	}
	return sort.Search(len(u), func(i int) bool { return u[i].seq < u[0].seq }) % len(u)
}

// add is u with k, its oldest run dropped when u holds max.
func (u unitRuns) add(k keptRun, max int) unitRuns {
	n := len(u)
	if n < max {
		if n == cap(u) {
			grown := make(unitRuns, n, n+min(max-n, 1+n/4))
			copy(grown, u)
			u = grown
		}
		return append(u, k)
	}
	u[u.head()] = k
	return u
}

// upTo is how many of u's runs have a seq of at most seq: a ring's seqs
// rise from its head.
func (u unitRuns) upTo(seq uint64) int {
	head := u.head()
	return sort.Search(len(u), func(i int) bool { return u[(head+i)%len(u)].seq > seq })
}

// appendFrom appends u's runs to sel, oldest first, from the from'th
// oldest on.
func (u unitRuns) appendFrom(sel []unitRun, unit string, from int) []unitRun {
	head := u.head()
	for i := from; i < len(u); i++ {
		sel = append(sel, unitRun{unit, u[(head+i)%len(u)]})
	}
	return sel
}

// unitRun is a kept run and its unit, as a read selects it.
type unitRun struct {
	unit string
	k    keptRun
}

// runsOf makes the Runs that sel keep, in seq order. All their changes
// share one array and all their hashes one string: what a read returns
// is read whole and let go.
func runsOf(sel []unitRun) []Run {
	if len(sel) == 0 {
		return nil
	}
	// Sorted by place, not moved: a unitRun is large and holds pointers.
	type place struct {
		seq uint64
		i   int
	}
	order := make([]place, len(sel))
	for i := range sel {
		order[i] = place{sel[i].k.seq, i}
	}
	slices.SortFunc(order, func(a, b place) int { return cmp.Compare(a.seq, b.seq) })
	changes, hashes := 0, 0
	for i := range sel {
		changes += len(sel[i].k.changes)
		if sel[i].k.flags&keptHashHex != 0 {
			hashes++
		}
	}
	all := make([]Change, 0, changes)
	hexes := make([]byte, 0, 2*hashBytes*hashes)
	for _, p := range order {
		if k := &sel[p.i].k; k.flags&keptHashHex != 0 {
			hexes = hex.AppendEncode(hexes, k.hash[:])
		}
	}
	hexed := string(hexes)
	out := make([]Run, len(sel))
	for o, p := range order {
		i := p.i
		k, r := &sel[i].k, &out[o]
		if k.more != nil && k.more.whole != nil {
			*r = *k.more.whole
		} else {
			*r = Run{Unit: sel[i].unit, Service: model.ServiceOf(sel[i].unit), Duration: k.dur, Outcome: outcomes[k.outcome]}
			switch {
			case k.flags&keptLocal != 0:
				r.Time = time.Unix(0, k.at)
			case k.flags&keptUTC != 0:
				r.Time = time.Unix(0, k.at).UTC()
			}
			if k.flags&keptHashHex != 0 {
				r.Hash, hexed = hexed[:2*hashBytes], hexed[2*hashBytes:]
			}
			if k.more != nil {
				r.Error, r.Stderr, r.Omitted = k.more.err, k.more.stderr, k.more.omitted
			}
		}
		r.Seq = k.seq
		if len(k.changes) > 0 {
			from := len(all)
			for _, c := range k.changes {
				all = append(all, *c)
			}
			r.Changes = all[from:len(all):len(all)]
		}
	}
	return out
}

// outcomeOf is s as a number, if it is one of outcomes.
func outcomeOf(s string) (keptOutcome, bool) {
	for i, o := range outcomes {
		if s == o {
			return keptOutcome(i), true
		}
	}
	return 0, false
}

// hexDigit is the value of each lower-case hex digit, as
// hex.EncodeToString writes them, and notHex for every other byte.
var hexDigit = func() (t [256]byte) {
	for i := range t {
		t[i] = notHex
	}
	for i, c := range "0123456789abcdef" {
		t[c] = byte(i)
	}
	return t
}()

const notHex = 0xff

// decodeHash sets out to the bytes s is the hex of, if s is hex of
// hashBytes bytes as hex.EncodeToString writes it.
func decodeHash(s string, out *[hashBytes]byte) bool {
	if len(s) != 2*hashBytes {
		return false
	}
	for i := range out {
		hi, lo := hexDigit[s[2*i]], hexDigit[s[2*i+1]]
		if hi|lo == notHex {
			return false
		}
		out[i] = hi<<4 | lo
	}
	return true
}
