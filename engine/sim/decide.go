package sim

import (
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/model"
)

// Runnable lists, in unit order, the units of st that may run now on any
// machine, as the control plane decides (schedule.Choose), from universes
// built afresh rather than from a controller's cached views. running says
// which units are running; they hold their wave and are not listed.
func Runnable(st *model.State, running func(unit string) bool, now time.Time) []string {
	cands := func(yield func(schedule.Candidate) bool) {
		for name, u := range st.Units {
			uni, _ := engine.Build(st, name)
			c := schedule.Candidate{Name: name, Hash: engine.Hash(uni), Machine: u.Machine, Member: schedule.Member(st, u), Claimed: running(name)}
			if !yield(c) {
				return
			}
		}
	}
	return schedule.Choose(st, cands, "", now).Run
}

// Handout is what a run of unit is given now: its universe with attempt
// and events (schedule.RunUniverse), the universe's hash, and the Seen
// record a successful run leaves behind.
func Handout(st *model.State, unit string) (charmapi.Universe, string, *model.Seen) {
	uni, seen := engine.Build(st, unit)
	hash := engine.Hash(uni)
	return schedule.RunUniverse(st, st.Units[unit], uni, hash, seen), hash, seen
}

// TimerDue lists, in unit order, the units of st whose update-status timer
// has fired at now (schedule.UpdateStatusDue), given when each last ran,
// as the controller decides it for an idle machine.
func TimerDue(st *model.State, last func(unit string) time.Time, interval time.Duration, now time.Time) []string {
	var due []string
	for name, u := range st.Units {
		uni, _ := engine.Build(st, name)
		if ok, _ := schedule.UpdateStatusDue(st, u, engine.Hash(uni), last(name), interval, now); ok {
			due = append(due, name)
		}
	}
	charmapi.SortUnits(due)
	return due
}

// TimerHandout is what an update-status run of unit is given now
// (schedule.UpdateStatusUniverse), with Handout's hash and Seen.
func TimerHandout(st *model.State, unit string) (charmapi.Universe, string, *model.Seen) {
	uni, seen := engine.Build(st, unit)
	hash := engine.Hash(uni)
	return schedule.UpdateStatusUniverse(st, st.Units[unit], uni, hash, seen), hash, seen
}
