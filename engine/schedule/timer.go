package schedule

import (
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/events"
	"github.com/fixpoint/fixpoint/model"
)

// DefaultUpdateStatus is how often a settled unit of an old-hook or ops
// charm gets update-status: Juju's update-status-hook-interval default.
const DefaultUpdateStatus = 5 * time.Minute

// The update-status timer. Juju runs update-status on every unit every
// few minutes; charms read their workload's health there, and ops charms
// re-emit the events they deferred at every dispatch, so the timer is what
// retries a deferred event when nothing else happens. Here a settled unit
// of an old-hook or ops charm gets a run of just update-status on its
// unchanged universe once interval has passed since its last run of any
// kind (any run re-emits deferred events, so a unit that ran lately needs
// no timer). Reconcile charms are never woken: their result is a function
// of the universe, which did not change, so a run would change nothing.
//
// Timer runs are not steps towards a fixed point: the state leaves them
// out of the divergence accounting (model.Result.Timer), and the unit
// stays settled in status while one is out.

// UpdateStatusAt is when a unit whose last run was at last gets its next
// update-status run; zero when interval is not positive (the timer is
// off).
func UpdateStatusAt(last time.Time, interval time.Duration) time.Time {
	if interval <= 0 {
		return time.Time{}
	}
	return last.Add(interval)
}

// Timed says whether u gets update-status runs at all: it is of an
// old-hook or ops charm, alive, installed (it reconciled once) and placed
// on a registered machine whose agent is not lost.
func Timed(st *model.State, u *model.Unit) bool {
	if u == nil || u.Life != model.Alive || u.Seen == nil || !Member(st, u) || Lost(st, u.Machine) {
		return false
	}
	svc := st.Services[u.Service]
	if svc == nil {
		return false
	}
	ch := st.Charms[svc.Charm]
	return ch != nil && ch.Legacy
}

// UpdateStatusDue says whether u, whose universe now has hash and whose
// last run was at last, gets an update-status run now; if not only
// because its timer has not fired yet, it also returns when it will.
// Only a settled unit is woken: one that needs a run gets it, and its
// hooks re-emit deferred events anyway.
func UpdateStatusDue(st *model.State, u *model.Unit, hash string, last time.Time, interval time.Duration, now time.Time) (bool, time.Time) {
	if interval <= 0 || !Timed(st, u) || NeedsRun(u, hash) {
		return false, time.Time{}
	}
	at := UpdateStatusAt(last, interval)
	if now.Before(at) {
		return false, at
	}
	return true, time.Time{}
}

// TimerRun says whether the next run of u on the universe with hash is
// an update-status run: a failed one is retried as one, not as a run with
// no events.
func TimerRun(u *model.Unit, hash string) bool {
	return u != nil && u.Error != nil && u.Error.Timer && u.Error.Kind == model.ErrHook && u.Error.Hash == hash
}

// UpdateStatusUniverse is the universe an update-status run of u is
// given: what RunUniverse gives (no change-driven events, since the unit
// is settled) followed by the update-status event.
func UpdateStatusUniverse(st *model.State, u *model.Unit, built *charmapi.Universe, hash string, seen *model.Seen) charmapi.Universe {
	uni := RunUniverse(st, u, built, hash, seen)
	return withUpdateStatus(uni)
}

// withUpdateStatus appends the update-status event unless it is there.
func withUpdateStatus(uni charmapi.Universe) charmapi.Universe {
	for _, ev := range uni.Events {
		if ev.Hook == events.UpdateStatus {
			return uni
		}
	}
	evs := make([]charmapi.Event, 0, len(uni.Events)+1)
	uni.Events = append(append(evs, uni.Events...), charmapi.Event{Hook: events.UpdateStatus})
	return uni
}
