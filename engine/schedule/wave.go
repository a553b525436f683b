package schedule

import (
	"iter"
	"time"

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
	// not due yet; zero when there is none. Queue.Choose also counts the
	// machine's queued units that wait for their time.
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
//
// Choose walks every candidate; Queue.Choose gives the same answer from
// an index, and Queue.ChooseInOrder its first units at the cost of the
// machine's queued units it walks, in unit order, to find them.
func Choose(st *model.State, cands iter.Seq[Candidate], machine string, now time.Time) Choice {
	g := gather{machine: machine, ch: Choice{Wave: -1}}
	for c := range cands {
		s := standOf(st, c, now)
		if s.holds() && (g.ch.Wave < 0 || s.wave < g.ch.Wave) {
			g.ch.Wave = s.wave
		}
		g.add(c, s)
	}
	return g.choice()
}

// standing is where one candidate stands in the waves at a time.
type standing uint8

const (
	// standsAside: it neither runs nor holds a wave back.
	standsAside standing = iota
	// running: it is claimed and holds its wave back.
	running
	// ready: it may run now and holds its wave back.
	ready
	// timerRetry: the retry of a failed update-status run, which runs
	// outside the waves (TimerRun).
	timerRetry
	// waiting: a failed run whose retry is not due yet.
	waiting
)

// stand is a candidate's standing, with its wave (running, ready) or its
// retry time (waiting).
type stand struct {
	standing standing
	wave     int
	retry    time.Time
}

// holds says the candidate holds its wave back.
func (s stand) holds() bool { return s.standing == running || s.standing == ready }

// standOf is the rule for one candidate at now: the one place that says
// who holds a wave, who may run and who waits, for Choose and Queue.Choose
// alike.
func standOf(st *model.State, c Candidate, now time.Time) stand {
	u := st.Units[c.Name]
	if u == nil || Lost(st, c.Machine) {
		return stand{}
	}
	if c.Claimed {
		return stand{standing: running, wave: u.Wave}
	}
	ok, retry := Due(u, c.Hash, c.Member, now)
	switch {
	case ok && !c.Moved && TimerRun(u, c.Hash):
		// Like the timer runs they retry, they are no step towards the
		// fixed point: they run outside the waves and hold none back.
		return stand{standing: timerRetry}
	case ok || c.Moved:
		return stand{standing: ready, wave: u.Wave}
	case !retry.IsZero():
		return stand{standing: waiting, retry: retry}
	}
	return stand{}
}

// gather assembles one machine's Choice from its candidates' standings,
// once the lowest wave (ch.Wave) is known.
type gather struct {
	machine string
	ch      Choice
	ours    []mine
	// timers are the machine's failed update-status runs due for a retry.
	timers []string
}

// mine is a unit of the machine that may run, and its wave.
type mine struct {
	name string
	wave int
}

// add takes in candidate c, which stands at s, if it is the machine's.
func (g *gather) add(c Candidate, s stand) {
	if g.machine != "" && c.Machine != g.machine {
		return
	}
	switch s.standing {
	case ready:
		g.ours = append(g.ours, mine{c.Name, s.wave})
	case timerRetry:
		g.timers = append(g.timers, c.Name)
	case waiting:
		g.wait(s.retry)
	}
}

// wait notes a time at which one of the machine's units may run.
func (g *gather) wait(at time.Time) {
	if g.ch.Next.IsZero() || at.Before(g.ch.Next) {
		g.ch.Next = at
	}
}

// choice is the machine's units of the lowest wave, and its timer
// retries, in unit order.
func (g *gather) choice() Choice {
	ch := g.ch
	for _, m := range g.ours {
		if m.wave == ch.Wave {
			ch.Run = append(ch.Run, m.name)
		}
	}
	ch.Run = append(ch.Run, g.timers...)
	sortUnits(ch.Run)
	return ch
}
