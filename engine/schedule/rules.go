package schedule

import (
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/events"
	"github.com/fixpoint/fixpoint/model"
)

// NeedsRun says whether u may need a run, given the hash of the universe
// it would be handed now: it has not reconciled that universe, or it is
// in error. Units that do not need a run are settled and leave the queue.
func NeedsRun(u *model.Unit, hash string) bool {
	return u != nil && (hash != u.Reconciled || u.Error != nil)
}

// NotBefore is when a unit that needs a run may have it: the zero time for
// now, or the retry time of a failed run of this same universe. A changed
// universe, or an operator's `resolved`, clears the wait.
func NotBefore(u *model.Unit, hash string) time.Time {
	if u == nil || u.Error == nil || u.Resolved != nil || u.Error.Kind == model.ErrDiverged || u.Error.Hash != hash || u.Error.RetryAt == 0 {
		return time.Time{}
	}
	return time.Unix(0, u.Error.RetryAt)
}

// Due says whether a unit should run now, given the hash of its universe
// and whether it is placed on a registered machine. If not only because a
// retry is not due yet, it returns when it will be. A diverged unit runs
// again only when an operator resolves it.
func Due(u *model.Unit, hash string, member bool, now time.Time) (bool, time.Time) {
	if u == nil || !member || u.Life == model.Dead {
		return false, time.Time{}
	}
	if u.Error != nil {
		switch {
		case u.Resolved != nil:
			return true, time.Time{}
		case u.Error.Kind == model.ErrDiverged:
			return false, time.Time{}
		case u.Error.Hash != hash:
			return true, time.Time{}
		}
		retry := time.Unix(0, u.Error.RetryAt)
		if !now.Before(retry) {
			return true, time.Time{}
		}
		return false, retry
	}
	return hash != u.Reconciled, time.Time{}
}

// Member reports whether u is placed on a registered machine: only there
// can it run, and only there does it see its relations.
func Member(st *model.State, u *model.Unit) bool {
	_, ok := st.Machines[u.Machine]
	return u.Machine != "" && ok
}

// Lost reports whether machine is gone or its agent lost: its units cannot
// run, so they hold nobody's wave back.
func Lost(st *model.State, machine string) bool {
	m := st.Machines[machine]
	return m == nil || m.Lost
}

// Attempt is the number of the next try of the universe with hash: one
// more than the failed tries of that same universe.
func Attempt(u *model.Unit, hash string) int {
	if u.Error != nil && u.Error.Hash == hash {
		return u.Error.Attempts + 1
	}
	return 1
}

// RunUniverse is the universe one run of u is given: a copy of built (the
// universe of hash, as Build returns it) with the attempt number, the
// legacy events since the unit's last successful reconcile, and the last
// settings of the members that departed since; the retry of a failed
// update-status run gets update-status again (TimerRun).
func RunUniverse(st *model.State, u *model.Unit, built *charmapi.Universe, hash string, seen *model.Seen) charmapi.Universe {
	uni := *built
	uni.Attempt = Attempt(u, hash)
	uni.Events = Events(st, u.Name, u.Seen, seen)
	if !sameMembers(u.Seen, seen) {
		uni = withDeparted(st, uni, u.Seen)
	}
	if TimerRun(u, hash) {
		uni = withUpdateStatus(uni)
	}
	return uni
}

// sameMembers reports whether every relation the unit last reconciled
// (before) has the same members in the universe it is about to get
// (after, the Seen record of the universe's own build): then none
// departed, and withDeparted need not list each member to find that out.
func sameMembers(before, after *model.Seen) bool {
	if before == nil {
		return true // nothing was seen, so nothing departed
	}
	if after == nil {
		return false
	}
	for id, sr := range before.Relations.All() {
		if a := after.Relations.Get(id); a == nil || a.Members != sr.Members {
			return false
		}
	}
	return true
}

// Events derives the old-hook events between what a unit last reconciled
// (before) and the universe it is about to get (after).
//
// Relations are looked up in the state, which still holds the ones that
// are dying: a relation the unit is leaving is no longer in its universe,
// yet its remote service and whether it was a peer relation decide the
// relation-departed and relation-broken events it gets.
func Events(st *model.State, unit string, before, after *model.Seen) []charmapi.Event {
	svc := model.ServiceOf(unit)
	lookup := func(id int) (events.RelInfo, bool) {
		r, ok := st.Relations[id]
		if !ok {
			return events.RelInfo{}, false
		}
		ep, _ := r.Endpoint(svc)
		remote, _ := r.Remote(svc)
		rev := func(unit string) (uint64, bool) { return st.SettingsRev(id, unit) }
		return events.RelInfo{RemoteApp: remote.Service, Peer: ep.Role == model.Peer, Revision: rev}, true
	}
	evs := events.DeriveSeen(unit, before, after, lookup)
	evs = append(evs, events.SecretEvents(before, after, func(id string) string { return secretLabel(st, unit, id) })...)
	if evs == nil {
		evs = []charmapi.Event{}
	}
	return evs
}

// RetryAt is when a run that failed on its attempt-th try of a universe
// is retried.
func RetryAt(b Backoff, attempt int, now time.Time) time.Time {
	return now.Add(b.Delay(max(attempt, 1)))
}

// KeepLast says whether the universe a unit just reconciled is worth
// keeping in memory to name the keys that keep changing should it
// diverge: only for units that ran often lately, a quarter of the way to
// model.DivergeBound. At 2,000-member universes keeping every unit's was
// most of the leader's heap.
func KeepLast(runs int) bool { return runs >= model.DivergeBound/4 }

// secretLabel is the label unit knows secret id by: its owner's, or its
// own as a consumer.
func secretLabel(st *model.State, unit, id string) string {
	s := st.Secrets[id]
	if s == nil {
		return ""
	}
	if s.Owns(unit, model.ServiceOf(unit)) {
		return s.Label
	}
	return s.Consumers[unit].Label
}
