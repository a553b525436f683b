package schedule

import (
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/events"
	"github.com/fixpoint/fixpoint/model"
)

func TestQueueFollowsWorkqueueSemantics(t *testing.T) {
	now := time.Unix(1000, 0)
	q := NewQueue(Backoff{Min: time.Second, Max: time.Minute})
	q.Add("a/0")
	q.Add("a/0")
	if q.Len() != 1 {
		t.Fatalf("adding twice queues twice: %d", q.Len())
	}
	q.AddAfter("a/0", now.Add(time.Hour))
	if _, at := first(q); !at.IsZero() {
		t.Fatalf("AddAfter delayed a unit queued to run now: %s", at)
	}
	q.AddAfter("b/0", now.Add(time.Hour))
	q.AddAfter("b/0", now.Add(time.Minute))
	if at := all(q)["b/0"]; !at.Equal(now.Add(time.Minute)) {
		t.Fatalf("the earlier time must win: %s", at)
	}
	at := q.AddRateLimited("c/0", 3, now)
	if d := at.Sub(now); d > 4*time.Second || d < 4*time.Second-4*time.Second/5 {
		t.Fatalf("third attempt waits %s, want about 4s", d)
	}
	if q.AddRateLimited("a/0", 1, now); !all(q)["a/0"].IsZero() {
		t.Fatal("a failure must not delay a unit queued to run now: its universe moved")
	}
	q.Add("c/0")
	if !all(q)["c/0"].IsZero() {
		t.Fatal("Add must drop a wait: something changed")
	}
	if !q.Forget("a/0") || q.Forget("a/0") || q.Has("a/0") {
		t.Fatal("Forget")
	}
	q.Clear()
	if q.Len() != 0 {
		t.Fatal("Clear")
	}
}

func first(q *Queue) (string, time.Time) {
	for u, at := range q.All() {
		return u, at
	}
	return "", time.Time{}
}

func all(q *Queue) map[string]time.Time { return maps.Collect(q.All()) }

func TestDue(t *testing.T) {
	now := time.Unix(1000, 0)
	later := now.Add(time.Minute).UnixNano()
	failed := func(kind, hash string, retry int64) *model.UnitError {
		return &model.UnitError{Kind: kind, Hash: hash, RetryAt: retry, Attempts: 2}
	}
	cases := []struct {
		name   string
		u      model.Unit
		member bool
		ok     bool
		retry  bool
	}{
		{"settled", model.Unit{Reconciled: "h"}, true, false, false},
		{"stale", model.Unit{Reconciled: "old"}, true, true, false},
		{"not on a registered machine", model.Unit{Reconciled: "old"}, false, false, false},
		{"dead", model.Unit{Reconciled: "old", Life: model.Dead}, true, false, false},
		{"failed, retry later", model.Unit{Error: failed(model.ErrHook, "h", later)}, true, false, true},
		{"failed, retry due", model.Unit{Error: failed(model.ErrHook, "h", now.UnixNano())}, true, true, false},
		{"failed on another universe", model.Unit{Error: failed(model.ErrHook, "old", later)}, true, true, false},
		{"diverged", model.Unit{Error: failed(model.ErrDiverged, "old", 0)}, true, false, false},
		{"diverged, resolved", model.Unit{Error: failed(model.ErrDiverged, "h", 0), Resolved: &model.Resolved{}}, true, true, false},
	}
	for _, c := range cases {
		ok, retry := Due(&c.u, "h", c.member, now)
		if ok != c.ok || retry.IsZero() == c.retry {
			t.Errorf("%s: Due = %v, %v", c.name, ok, retry)
		}
		if c.retry && !NotBefore(&c.u, "h").Equal(retry) {
			t.Errorf("%s: NotBefore %v disagrees with Due's retry %v", c.name, NotBefore(&c.u, "h"), retry)
		}
	}
	u := &model.Unit{Error: failed(model.ErrHook, "h", later)}
	if Attempt(u, "h") != 3 || Attempt(u, "other") != 1 {
		t.Error("Attempt")
	}
}

func TestChooseRunsTheLowestWave(t *testing.T) {
	st := model.NewState()
	st.Machines["m"] = &model.Machine{Name: "m"}
	st.Machines["n"] = &model.Machine{Name: "n"}
	st.Machines["gone"] = &model.Machine{Name: "gone", Lost: true}
	add := func(name, machine string, wave int) {
		st.Units[name] = &model.Unit{Name: name, Service: model.ServiceOf(name), Machine: machine, Wave: wave, Reconciled: "old"}
	}
	add("a/10", "m", 1)
	add("a/2", "m", 1)
	add("b/0", "n", 1)
	add("c/0", "m", 2)
	add("d/0", "gone", 0)
	cands := func(extra ...Candidate) func(func(Candidate) bool) {
		var cs []Candidate
		for _, name := range slices.Sorted(maps.Keys(st.Units)) {
			cs = append(cs, Candidate{Name: name, Hash: "new", Machine: st.Units[name].Machine, Member: true})
		}
		return slices.Values(append(cs, extra...))
	}
	now := time.Unix(0, 0)
	got := Choose(st, cands(), "m", now)
	if got.Wave != 1 || !reflect.DeepEqual(got.Run, []string{"a/2", "a/10"}) {
		t.Fatalf("machine m: %+v (a lost machine's wave 0 must hold nobody back)", got)
	}
	if got := Choose(st, cands(), "", now); !reflect.DeepEqual(got.Run, []string{"a/2", "a/10", "b/0"}) {
		t.Fatalf("every machine: %+v", got)
	}
	// A running unit of a lower wave holds the others back.
	add("e/0", "n", 0)
	st.Units["e/0"].Reconciled = "new"
	if got := Choose(st, cands(Candidate{Name: "e/0", Hash: "new", Machine: "n", Member: true, Claimed: true}), "m", now); got.Wave != 0 || len(got.Run) != 0 {
		t.Fatalf("a running wave-0 unit must hold wave 1 back: %+v", got)
	}
	// A unit that saw a change holds its wave before it is rebuilt.
	if got := Choose(st, cands(Candidate{Name: "e/0", Hash: "new", Machine: "n", Member: true, Moved: true}), "n", now); !reflect.DeepEqual(got.Run, []string{"e/0"}) {
		t.Fatalf("moved unit: %+v", got)
	}
	// A failed unit not due yet is the machine's next wake-up.
	retry := now.Add(time.Minute)
	st.Units["c/0"].Error = &model.UnitError{Kind: model.ErrHook, Hash: "new", RetryAt: retry.UnixNano()}
	st.Units["a/2"].Reconciled, st.Units["a/10"].Reconciled = "new", "new"
	if got := Choose(st, cands(), "m", now); len(got.Run) != 0 || !got.Next.Equal(retry) {
		t.Fatalf("retry: %+v", got)
	}
}

func TestUpdateStatusDue(t *testing.T) {
	st := model.NewState()
	st.Machines["m"] = &model.Machine{Name: "m"}
	st.Machines["gone"] = &model.Machine{Name: "gone", Lost: true}
	st.Charms["old"] = &model.Charm{Hash: "old", Legacy: true}
	st.Charms["new"] = &model.Charm{Hash: "new"}
	st.Services["c"] = &model.Service{Name: "c", Charm: "old"}
	st.Services["r"] = &model.Service{Name: "r", Charm: "new"}
	settled := func(name, machine string) *model.Unit {
		u := &model.Unit{Name: name, Service: model.ServiceOf(name), Machine: machine, Life: model.Alive, Reconciled: "h", Seen: &model.Seen{Life: model.Alive}}
		st.Units[name] = u
		return u
	}
	last := time.Unix(1000, 0)
	const every = 5 * time.Minute
	at := func(u *model.Unit, now time.Time) (bool, time.Time) {
		return UpdateStatusDue(st, u, "h", last, every, now)
	}
	c := settled("c/0", "m")
	if ok, next := at(c, last.Add(every-time.Nanosecond)); ok || !next.Equal(last.Add(every)) {
		t.Fatalf("before the interval: due %v, next %v", ok, next)
	}
	if ok, _ := at(c, last.Add(every)); !ok {
		t.Fatal("a settled classic unit is due once the interval has passed")
	}
	if ok, next := UpdateStatusDue(st, c, "h", last, 0, last.Add(time.Hour)); ok || !next.IsZero() {
		t.Fatal("an interval of 0 turns the timer off")
	}
	never := func(what string, u *model.Unit, hash string) {
		t.Helper()
		if ok, next := UpdateStatusDue(st, u, hash, last, every, last.Add(time.Hour)); ok || !next.IsZero() {
			t.Errorf("%s: due %v, next %v; want never", what, ok, next)
		}
	}
	never("a reconcile charm's unit", settled("r/0", "m"), "h")
	never("a unit that needs a run", c, "moved")
	never("a unit on a lost machine", settled("c/1", "gone"), "h")
	u := settled("c/2", "m")
	u.Seen = nil
	never("a unit never installed", u, "h")
	u = settled("c/3", "m")
	u.Life = model.Dying
	never("a dying unit", u, "h")
	u = settled("c/4", "m")
	u.Error = &model.UnitError{Kind: model.ErrHook, Hash: "h", Timer: true}
	never("a unit in error", u, "h")
	if !TimerRun(u, "h") || TimerRun(u, "other") || TimerRun(c, "h") {
		t.Error("TimerRun: only the retry of a failed timer run on its own universe is one")
	}
	uni := RunUniverse(st, u, &charmapi.Universe{Unit: "c/4"}, "h", u.Seen)
	if len(uni.Events) != 1 || uni.Events[0].Hook != events.UpdateStatus {
		t.Errorf("the retry of a failed update-status run is given %+v", uni.Events)
	}
	uni = UpdateStatusUniverse(st, c, &charmapi.Universe{Unit: "c/0"}, "h", c.Seen)
	if len(uni.Events) != 1 || uni.Events[0].Hook != events.UpdateStatus || uni.Attempt != 1 {
		t.Errorf("an update-status run is given %+v (attempt %d)", uni.Events, uni.Attempt)
	}
}

func TestChooseRetriesAFailedUpdateStatusOutsideTheWaves(t *testing.T) {
	st := model.NewState()
	st.Machines["m"] = &model.Machine{Name: "m"}
	now := time.Unix(1000, 0)
	st.Units["a/0"] = &model.Unit{Name: "a/0", Service: "a", Machine: "m", Wave: 1, Reconciled: "old"}
	st.Units["b/0"] = &model.Unit{Name: "b/0", Service: "b", Machine: "m", Wave: 5, Reconciled: "h",
		Error: &model.UnitError{Kind: model.ErrHook, Hash: "h", Timer: true, RetryAt: now.UnixNano()}}
	cands := slices.Values([]Candidate{
		{Name: "a/0", Hash: "new", Machine: "m", Member: true},
		{Name: "b/0", Hash: "h", Machine: "m", Member: true},
	})
	if got := Choose(st, cands, "m", now); got.Wave != 1 || !reflect.DeepEqual(got.Run, []string{"a/0", "b/0"}) {
		t.Fatalf("a failed update-status is retried beside wave 1, holding nothing back: %+v", got)
	}
}
