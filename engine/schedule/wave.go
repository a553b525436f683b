package schedule

import (
	"iter"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// Candidate is what the scheduler knows of one unit beyond the state.
type Candidate struct {
	Name string
	// Hash is the hash of the universe it would be handed, as last
	// computed.
	Hash    string
	Machine string
	// Member says its machine is registered.
	Member bool
	// Moved says something it sees changed since Hash was computed: it
	// needs a run whatever Hash says, until it is looked at again.
	Moved bool
	// Claimed says it is running: handed out and neither reported nor
	// past its lease.
	Claimed bool
}

// Choice is what Choose decides for one machine.
type Choice struct {
	// Wave is the lowest wave of a unit that is running or may run now;
	// -1 when there is none.
	Wave int
	// Run lists the units of the machine in that wave that may run now,
	// in charmapi.UnitLess order.
	Run []string
	// Next is the earliest retry of a failed unit of the machine that is
	// not due yet; zero when there is none.
	Next time.Time
}

// Choose picks the units of machine ("" for every machine) that may run
// now among cands: the running units and those that may need a run.
//
// Units run in waves: none runs again while a unit with fewer runs since
// the last operator change waits or is running. A burst of first runs then
// lands before anyone reconciles it, so a unit related to a hundred others
// runs a handful of times, not a hundred. Units on lost machines cannot
// run and hold nobody back, and the retry of a failed update-status run
// (TimerRun) runs outside the waves. A moved candidate holds its wave on the
// strength of the change alone; the caller rebuilds it before handing it
// out and, should it turn out unchanged (Due says no), chooses again
// without it.
func Choose(st *model.State, cands iter.Seq[Candidate], machine string, now time.Time) Choice {
	ch := Choice{Wave: -1}
	lowest := func(w int) {
		if ch.Wave < 0 || w < ch.Wave {
			ch.Wave = w
		}
	}
	type mine struct {
		name string
		wave int
	}
	var ours []mine
	// timers are the failed update-status runs of machine due for a retry:
	// like the timer runs they retry, they are no step towards the fixed
	// point, so they run outside the waves and hold none back.
	var timers []string
	for c := range cands {
		u := st.Units[c.Name]
		if u == nil || Lost(st, c.Machine) {
			continue
		}
		if c.Claimed {
			lowest(u.Wave)
			continue
		}
		ok, retry := Due(u, c.Hash, c.Member, now)
		switch {
		case ok && !c.Moved && TimerRun(u, c.Hash):
			if machine == "" || c.Machine == machine {
				timers = append(timers, c.Name)
			}
		case ok || c.Moved:
			lowest(u.Wave)
			if machine == "" || c.Machine == machine {
				ours = append(ours, mine{c.Name, u.Wave})
			}
		case (machine == "" || c.Machine == machine) && !retry.IsZero() && (ch.Next.IsZero() || retry.Before(ch.Next)):
			ch.Next = retry
		}
	}
	for _, m := range ours {
		if m.wave == ch.Wave {
			ch.Run = append(ch.Run, m.name)
		}
	}
	ch.Run = append(ch.Run, timers...)
	charmapi.SortUnits(ch.Run)
	return ch
}
