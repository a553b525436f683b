package engine

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/keyring"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// set moves c to at.
func (c *fakeClock) set(at time.Time) { c.Add(at.Sub(c.Now())) }

// runWith is runAll with a controller of the test's own, whose clock is
// the test's.
func runWith(t *testing.T, ctl *Controller, hooks map[string]func(*charmapi.Universe) *charmapi.Result) map[string]int {
	t.Helper()
	runs := map[string]int{}
	ctx := context.Background()
	for round := 0; round < 50; round++ {
		work, err := ctl.WaitForWork(ctx, "m", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(work) == 0 {
			return runs
		}
		var reps []wire.Report
		for _, w := range work {
			runs[w.Unit]++
			out, _ := json.Marshal(hooks[w.Universe.Service](w.Universe))
			reps = append(reps, wire.Report{Unit: w.Unit, Hash: w.Hash, Output: out})
		}
		if _, err := ctl.Accept(ctx, "m", reps); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("no fixed point after 50 rounds")
	return nil
}

// dueShop is secretShop's db, two units, on machine m, with a cluster key.
func dueShop(t *testing.T) *memStore {
	t.Helper()
	s := newMemStore()
	keys, err := keyring.Open(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	s.st.SetSealer(keys)
	if _, err := s.Apply(context.Background(), &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m", Address: "10.0.0.9"}}); err != nil {
		t.Fatal(err)
	}
	charms := map[string]*model.Charm{"h-db": {Hash: "h-db", Meta: model.CharmMeta{Name: "db"}}}
	env := model.Environment{APIVersion: model.APIVersion, Name: "shop",
		Services: map[string]model.ServiceSpec{"db": {CharmHash: "h-db", Units: intp(2)}}}
	if _, err := s.Apply(context.Background(), &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		t.Fatal(err)
	}
	return s
}

// dueSecret returns the one secret in s's state.
func dueSecret(t *testing.T, s *memStore) *model.Secret {
	t.Helper()
	var out *model.Secret
	_ = s.View(func(st *model.State) error {
		for _, sec := range st.Secrets {
			out = sec
		}
		return nil
	})
	if out == nil {
		t.Fatal("no secret in the state")
	}
	return out
}

// TestSecretRotationFiresOnItsSchedule: db's leader adds an
// application-owned secret that rotates hourly. Nothing fires before the
// hour; at the hour the leader, and only it, gets secret-rotate once; it
// does nothing, so the rotation comes due again RotateRetryDelay later;
// it then adds a revision, which moves the next rotation an hour on.
// A new leader's engine (another controller on the same state) finds
// the due rotation in the replicated state, and two engines proposing
// the same occurrence fire it once.
func TestSecretRotationFiresOnItsSchedule(t *testing.T) {
	s := dueShop(t)
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: t0}
	ctl := NewController(s, Options{Window: time.Millisecond, Now: clock.Now})
	ctx := context.Background()
	id, _ := charmapi.NewSecretID()
	answer := false
	var rotated []string
	hooks := map[string]func(*charmapi.Universe) *charmapi.Result{
		"db": func(u *charmapi.Universe) *charmapi.Result {
			r := charmapi.NewResult()
			sec := u.Secret(id)
			for _, ev := range u.Events {
				if ev.Hook == "secret-rotate" {
					rotated = append(rotated, u.Unit)
					if ev.Secret != id || ev.SecretLabel != "pw" || !u.Leader || sec == nil || sec.RotateDue == 0 {
						t.Errorf("%s: secret-rotate %+v, leader %v, secret %+v", u.Unit, ev, u.Leader, sec)
					}
					if answer {
						r.Secrets = append(r.Secrets, charmapi.SecretChange{Op: "set", ID: id, Content: map[string]string{"password": "rotated"}})
					}
				}
			}
			if u.Leader && sec == nil {
				label, hourly := "pw", "hourly"
				r.Secrets = append(r.Secrets, charmapi.SecretChange{Op: "add", ID: id, Owner: "application", Label: &label, Rotate: &hourly,
					Content: map[string]string{"password": "first"}})
			}
			return r.Active("")
		},
	}
	step := func(at time.Time) map[string]int {
		t.Helper()
		clock.set(at)
		secretsDueStep(ctx, ctl.store, ctl.opts)
		return runWith(t, ctl, hooks)
	}
	runWith(t, ctl, hooks)
	if sec := dueSecret(t, s); sec.NextRotate != t0.Add(time.Hour).UnixNano() {
		t.Fatalf("added at %s: next rotation %s", t0, time.Unix(0, sec.NextRotate).UTC())
	}

	clock.set(t0.Add(30 * time.Minute))
	if wait := secretsDueStep(ctx, ctl.store, ctl.opts); wait != secretDueIdle {
		t.Errorf("half an hour early: wait %s, want the idle bound %s", wait, secretDueIdle)
	}
	clock.set(t0.Add(time.Hour - 10*time.Second))
	if wait := secretsDueStep(ctx, ctl.store, ctl.opts); wait != 10*time.Second {
		t.Errorf("ten seconds early: wait %s", wait)
	}
	if runs := runWith(t, ctl, hooks); len(rotated) != 0 || len(runs) != 0 {
		t.Fatalf("before the hour: rotated %v, runs %v", rotated, runs)
	}

	// The occurrence wakes the leader alone: only its universe shows the
	// schedule.
	if runs := step(t0.Add(time.Hour)); len(rotated) != 1 || len(runs) != 1 || runs[rotated[0]] != 1 {
		t.Fatalf("at the hour: secret-rotate ran on %v, units ran %v; want the leader once", rotated, runs)
	}
	// The same occurrence is not recorded, nor fired, twice.
	step(t0.Add(time.Hour + time.Second))
	if len(rotated) != 1 {
		t.Fatalf("a second after: secret-rotate ran on %v", rotated)
	}
	// The leader did nothing: Juju's retry.
	step(t0.Add(time.Hour + model.RotateRetryDelay))
	if len(rotated) != 2 {
		t.Fatalf("after RotateRetryDelay: secret-rotate ran on %v, want a retry", rotated)
	}
	// It answers the next one with a new revision.
	answer = true
	retry := t0.Add(time.Hour + 2*model.RotateRetryDelay)
	step(retry)
	sec := dueSecret(t, s)
	if len(rotated) != 3 || sec.Latest() != 2 || sec.RotateRev != 0 || sec.NextRotate != retry.Add(time.Hour).UnixNano() {
		t.Fatalf("answered: rotated %v, secret %+v", rotated, sec)
	}
	answer = false
	step(retry.Add(model.RotateRetryDelay))
	if len(rotated) != 3 {
		t.Fatalf("after the new revision: secret-rotate ran on %v, want no retry", rotated)
	}

	// Two engines, the old leader's and the new one's, see the same
	// rotation due: it is recorded once, and fires once.
	next := time.Unix(0, sec.NextRotate)
	clock.set(next)
	other := NewController(s, Options{Window: time.Millisecond, Now: clock.Now})
	secretsDueStep(ctx, other.store, other.opts)
	secretsDueStep(ctx, ctl.store, ctl.opts)
	runWith(t, other, hooks)
	if sec := dueSecret(t, s); sec.RotateDue != 4 || len(rotated) != 4 {
		t.Fatalf("two engines at %s: rotations due %d, secret-rotate ran on %v", next, sec.RotateDue, rotated)
	}
	for _, u := range rotated {
		if u != rotated[0] {
			t.Errorf("secret-rotate ran on %v: not only the leader", rotated)
		}
	}
}

// TestSecretExpiryFiresUntilTheRevisionGoes: a unit-owned secret whose
// revision expires gets secret-expired with that revision, once per
// occurrence, again every ExpireRetryDelay while the owner keeps it, and
// no more once it removes it. A new revision has no expiry of its own.
func TestSecretExpiryFiresUntilTheRevisionGoes(t *testing.T) {
	s := dueShop(t)
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: t0}
	ctl := NewController(s, Options{Window: time.Millisecond, Now: clock.Now})
	ctx := context.Background()
	id, _ := charmapi.NewSecretID()
	expire := t0.Add(10 * time.Second).Format(time.RFC3339)
	var expired []string
	removeOn := 0
	hooks := map[string]func(*charmapi.Universe) *charmapi.Result{
		"db": func(u *charmapi.Universe) *charmapi.Result {
			r := charmapi.NewResult()
			if u.Unit != "db/0" {
				return r.Active("")
			}
			sec := u.Secret(id)
			for _, ev := range u.Events {
				if ev.Hook == "secret-expired" {
					expired = append(expired, ev.String())
					if len(expired) == 2 {
						r.Secrets = append(r.Secrets, charmapi.SecretChange{Op: "set", ID: id, Content: map[string]string{"password": "second"}})
					}
					if len(expired) == removeOn {
						r.Secrets = append(r.Secrets, charmapi.SecretChange{Op: "remove", ID: id, Revision: ev.SecretRevision})
					}
				}
			}
			if sec == nil {
				r.Secrets = append(r.Secrets, charmapi.SecretChange{Op: "add", ID: id, Owner: "unit", Expire: &expire,
					Content: map[string]string{"password": "first"}})
			}
			return r.Active("")
		},
	}
	step := func(at time.Time) {
		t.Helper()
		clock.set(at)
		secretsDueStep(ctx, ctl.store, ctl.opts)
		runWith(t, ctl, hooks)
	}
	runWith(t, ctl, hooks)
	step(t0.Add(5 * time.Second))
	if len(expired) != 0 {
		t.Fatalf("before the expiry: %v", expired)
	}
	want := "secret-expired " + id + "/1"
	exp := t0.Add(10 * time.Second)
	step(exp)
	step(exp.Add(time.Second))
	if len(expired) != 1 || expired[0] != want {
		t.Fatalf("at the expiry: %q, want %q once", expired, want)
	}
	// Kept: due again; the owner adds revision 2, which does not expire.
	step(exp.Add(model.ExpireRetryDelay))
	if sec := dueSecret(t, s); len(expired) != 2 || expired[1] != want || sec.Latest() != 2 || sec.LatestExpire() != 0 {
		t.Fatalf("after ExpireRetryDelay: %q, secret %+v", expired, sec)
	}
	// Revision 1 is still kept: due again, and removed this time.
	removeOn = 3
	step(exp.Add(2 * model.ExpireRetryDelay))
	if sec := dueSecret(t, s); len(expired) != 3 || sec.Revision(1) != nil {
		t.Fatalf("removed: %q, secret %+v", expired, sec)
	}
	step(exp.Add(3 * model.ExpireRetryDelay))
	if len(expired) != 3 {
		t.Fatalf("after the revision went: %q", expired)
	}
	if wait := secretsDueStep(ctx, ctl.store, ctl.opts); wait != secretDueIdle {
		t.Errorf("nothing scheduled: wait %s, want %s", wait, secretDueIdle)
	}
}

// TestSecretsDueCapsACommand: more occurrences than a command may carry
// are proposed MaxSecretDue at a time, the rest at once after.
func TestSecretsDueCapsACommand(t *testing.T) {
	st := model.NewState()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	st.Secrets = map[string]*model.Secret{}
	for i := 0; i < model.MaxSecretDue+10; i++ {
		id, _ := model.NewSecretID(func(b []byte) error { b[0], b[1] = byte(i), byte(i>>8); return nil })
		st.Secrets[id] = &model.Secret{ID: id, OwnerKind: model.SecretOwnerUnit, Owner: "db/0", Rotate: "hourly", NextRotate: now.UnixNano(),
			Revisions: []model.SecretRevision{{Rev: 1, Expire: now.UnixNano()}}}
	}
	due, next := secretsDue(st, now)
	if n := len(due.Rotate) + len(due.Expire); n != model.MaxSecretDue || !next.Equal(now) {
		t.Fatalf("%d occurrences, next %s", n, next)
	}
	if err := (&model.Command{Op: model.OpSecretDue, Time: now.UnixNano(), SecretDue: due}).Validate(); err != nil {
		t.Fatalf("the capped command: %v", err)
	}
}

// TestWatchSecretsRecordsWhatIsDue: the watch records a due expiry only
// while its node leads, and again when it leads anew.
func TestWatchSecretsRecordsWhatIsDue(t *testing.T) {
	s := newMemStore()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: t0}
	const id = "cn0gqa6qs7s1bm0kfp8g"
	s.st.Secrets = map[string]*model.Secret{id: {ID: id, OwnerKind: model.SecretOwnerUnit, Owner: "db/0",
		Revisions: []model.SecretRevision{{Rev: 1, Sealed: "s", Expire: t0.UnixNano()}}}}
	ctl := NewController(s, Options{Now: clock.Now})
	var leading atomic.Bool
	var asked atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctl.WatchSecrets(ctx, func() bool { asked.Add(1); return leading.Load() })
	}()
	defer func() { cancel(); <-done }()
	expireDue := func() int {
		var n int
		_ = s.View(func(st *model.State) error { n = st.Secrets[id].Revisions[0].ExpireDue; return nil })
		return n
	}
	// A follower asks, and records nothing.
	rafttest.Until(t, time.Minute, "the watch asked twice whether it leads", func() bool { return asked.Load() >= 2 })
	if n := expireDue(); n != 0 {
		t.Fatalf("a follower recorded %d expiries", n)
	}
	leading.Store(true)
	rafttest.Until(t, time.Minute, "the expiry recorded", func() bool { return expireDue() == 1 })
	// Due again a retry delay on: the leader records it once more, at
	// the latest when an entry lands (the fake clock moves no timer).
	clock.Add(model.ExpireRetryDelay)
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpLiveness, Liveness: &model.SetLiveness{Lost: map[string]bool{}}}); err != nil {
		t.Fatal(err)
	}
	rafttest.Until(t, time.Minute, "the retry recorded", func() bool { return expireDue() == 2 })
}
