package model

import (
	"strings"
	"testing"
	"time"
)

func TestNextRotateTimeFollowsThePolicy(t *testing.T) {
	last := time.Date(2030, 1, 31, 12, 0, 0, 0, time.UTC)
	for policy, want := range map[string]time.Time{
		"hourly":    last.Add(time.Hour),
		"daily":     last.AddDate(0, 0, 1),
		"weekly":    last.AddDate(0, 0, 7),
		"monthly":   last.AddDate(0, 1, 0),
		"quarterly": last.AddDate(0, 3, 0),
		"yearly":    last.AddDate(1, 0, 0),
	} {
		if got := NextRotateTime(policy, last.UnixNano(), last.UnixNano()); got != want.UnixNano() {
			t.Errorf("%s: next rotation %s, want %s", policy, time.Unix(0, got).UTC(), want)
		}
	}
	for _, p := range []string{"never", ""} {
		if got := NextRotateTime(p, last.UnixNano(), last.UnixNano()); got != 0 {
			t.Errorf("%q: next rotation %d, want none", p, got)
		}
	}
	// A period that ended already is due now, never in the past.
	now := last.Add(48 * time.Hour).UnixNano()
	if got := NextRotateTime("daily", last.UnixNano(), now); got != now {
		t.Errorf("overdue daily rotation at %s, want now %s", time.Unix(0, got).UTC(), time.Unix(0, now).UTC())
	}
}

const (
	dueID  = "cn0gqa6qs7s1bm0kfp8g"
	dueID2 = "cn0gqa6qs7s1bm0kfp8h"
)

func TestSecretDueCommandIsChecked(t *testing.T) {
	ok := &SecretDue{Rotate: []string{dueID}, Expire: []SecretRevisionRef{{ID: dueID, Rev: 1}}}
	many := &SecretDue{}
	for i := 0; i <= MaxSecretDue; i++ {
		many.Expire = append(many.Expire, SecretRevisionRef{ID: dueID, Rev: i + 1})
	}
	for name, tc := range map[string]struct {
		c    Command
		want string
	}{
		"valid":         {Command{Op: OpSecretDue, Time: 1, SecretDue: ok}, ""},
		"no payload":    {Command{Op: OpSecretDue, Time: 1}, "without its payload"},
		"no time":       {Command{Op: OpSecretDue, SecretDue: ok}, "without its time"},
		"nothing":       {Command{Op: OpSecretDue, Time: 1, SecretDue: &SecretDue{}}, "records nothing"},
		"too many":      {Command{Op: OpSecretDue, Time: 1, SecretDue: many}, "the limit is"},
		"bad id":        {Command{Op: OpSecretDue, Time: 1, SecretDue: &SecretDue{Rotate: []string{"nope"}}}, "a secret id is"},
		"revision 0":    {Command{Op: OpSecretDue, Time: 1, SecretDue: &SecretDue{Expire: []SecretRevisionRef{{ID: dueID}}}}, "revisions start at 1"},
		"rotate twice":  {Command{Op: OpSecretDue, Time: 1, SecretDue: &SecretDue{Rotate: []string{dueID, dueID}}}, "twice"},
		"expire twice":  {Command{Op: OpSecretDue, Time: 1, SecretDue: &SecretDue{Expire: []SecretRevisionRef{{ID: dueID, Rev: 2}, {ID: dueID, Rev: 2}}}}, "twice"},
		"two payloads":  {Command{Op: OpSecretDue, Time: 1, SecretDue: ok, Limits: &Limits{}}, "payloads"},
		"payload alone": {Command{Op: OpLiveness, SecretDue: ok}, "without its payload"},
	} {
		err := tc.c.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one saying %q", name, err, tc.want)
		}
	}
}

// dueState holds a unit-owned secret with two revisions, the second
// expiring at exp, rotating hourly from at, and an operator's secret.
func dueState(at, exp time.Time) *State {
	st := NewState()
	st.Secrets = map[string]*Secret{
		dueID: {ID: dueID, OwnerKind: SecretOwnerUnit, Owner: "db/0", Rotate: "hourly",
			NextRotate: NextRotateTime("hourly", at.UnixNano(), at.UnixNano()),
			Revisions:  []SecretRevision{{Rev: 1, Sealed: "s1"}, {Rev: 2, Sealed: "s2", Expire: exp.UnixNano()}}},
		dueID2: {ID: dueID2, OwnerKind: SecretOwnerUser, Rotate: "hourly", NextRotate: at.UnixNano(),
			Revisions: []SecretRevision{{Rev: 1, Sealed: "s1", Expire: at.UnixNano()}}},
	}
	return st
}

// TestSecretDueRecordsEachOccurrenceOnce: an occurrence that is due is
// recorded once, a second proposal of it (a leader's retry, or a new
// leader's) is skipped, and the next comes a retry delay later.
func TestSecretDueRecordsEachOccurrenceOnce(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	exp := at.Add(10 * time.Minute)
	st := dueState(at, exp)
	due := func(now time.Time, d *SecretDue) *Response {
		t.Helper()
		resp, err := st.Apply(st.Index+1, &Command{Op: OpSecretDue, Time: now.UnixNano(), SecretDue: d})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	both := &SecretDue{Rotate: []string{dueID}, Expire: []SecretRevisionRef{{ID: dueID, Rev: 2}}}

	if resp := due(at.Add(time.Minute), both); len(resp.Skipped) != 2 {
		t.Fatalf("early: skipped %q, want both not due", resp.Skipped)
	}
	if s := st.Secrets[dueID]; s.RotateDue != 0 || s.Revisions[1].ExpireDue != 0 {
		t.Fatalf("early occurrence recorded: %+v", s)
	}

	resp := due(exp, &SecretDue{Expire: []SecretRevisionRef{{ID: dueID, Rev: 2}, {ID: dueID, Rev: 1}, {ID: dueID2, Rev: 1}}})
	s := st.Secrets[dueID]
	if len(resp.Skipped) != 2 || s.Revisions[1].ExpireDue != 1 || s.Revisions[1].ExpiredAt != exp.UnixNano() || s.Revisions[0].ExpireDue != 0 {
		t.Fatalf("at expiry: skipped %q, secret %+v", resp.Skipped, s)
	}
	if st.Secrets[dueID2].Revisions[0].ExpireDue != 0 {
		t.Errorf("an operator's secret, which no unit owns, came due: %+v", st.Secrets[dueID2])
	}
	if got := s.Expired(); len(got) != 1 || got[2] != 1 {
		t.Errorf("Expired() = %v, want revision 2 once", got)
	}
	// The same occurrence again: nothing moves.
	if resp := due(exp.Add(time.Second), both); len(resp.Skipped) != 2 || st.Secrets[dueID] != s {
		t.Fatalf("a repeated proposal: skipped %q, secret %+v", resp.Skipped, st.Secrets[dueID])
	}
	// The owner kept the revision: it is due again a retry delay on.
	if got := s.Revisions[1].DueAt(); got != exp.Add(ExpireRetryDelay).UnixNano() {
		t.Errorf("expiry retry at %s, want %s", time.Unix(0, got).UTC(), exp.Add(ExpireRetryDelay))
	}

	rot := at.Add(time.Hour)
	due(rot, both)
	s = st.Secrets[dueID]
	if s.RotateDue != 1 || s.RotateRev != 2 || s.NextRotate != rot.Add(RotateRetryDelay).UnixNano() || s.Revisions[1].ExpireDue != 2 {
		t.Fatalf("at rotation: %+v", s)
	}
	if s.Index != st.Index {
		t.Errorf("secret index %d, want the entry %d that moved it", s.Index, st.Index)
	}
}

// TestScheduleEditMovesTheSchedule: a policy starts its period when set;
// a new revision answers a due rotation; --expire belongs to a revision.
func TestScheduleEditMovesTheSchedule(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	hourly, daily, never := "hourly", "daily", "never"
	exp := at + int64(time.Hour)
	s := &Secret{ID: dueID, OwnerKind: SecretOwnerUnit, Owner: "db/0", Revisions: []SecretRevision{{Rev: 1}}}
	scheduleEdit(s, &SecretChange{Rotate: &hourly, Expire: &exp}, at, true)
	if s.NextRotate != at+int64(time.Hour) || s.Revisions[0].Expire != exp {
		t.Fatalf("add: %+v", s)
	}
	// A set of the same policy, with no rotation due, keeps its period.
	scheduleEdit(s, &SecretChange{Rotate: &hourly}, at+int64(time.Minute), false)
	if s.NextRotate != at+int64(time.Hour) {
		t.Errorf("same policy moved the rotation to %d", s.NextRotate)
	}
	// A rotation came due; metadata alone does not answer it.
	s.RotateDue, s.RotateRev, s.NextRotate = 1, 1, at+int64(time.Hour+RotateRetryDelay)
	scheduleEdit(s, &SecretChange{}, at+int64(time.Hour), false)
	if s.RotateRev != 1 {
		t.Errorf("a set without content answered the rotation: %+v", s)
	}
	// A new revision does: the next is a period on, and it has no expiry
	// of its own unless given one.
	s.Revisions = append(s.Revisions, SecretRevision{Rev: 2})
	now := at + int64(time.Hour+time.Minute)
	scheduleEdit(s, &SecretChange{}, now, true)
	if s.RotateRev != 0 || s.NextRotate != now+int64(time.Hour) || s.Revisions[1].Expire != 0 || s.Revisions[0].Expire != exp {
		t.Errorf("a new revision: %+v", s)
	}
	// --expire without content sets the latest revision's, afresh.
	s.Revisions[1].ExpiredAt, s.Revisions[1].ExpireDue = now, 1
	later := now + int64(time.Hour)
	scheduleEdit(s, &SecretChange{Expire: &later}, now, false)
	if r := s.Revisions[1]; r.Expire != later || r.DueAt() != later || r.ExpireDue != 1 {
		t.Errorf("--expire on the latest revision: %+v", r)
	}
	scheduleEdit(s, &SecretChange{Rotate: &daily}, now, false)
	if s.NextRotate != now+int64(24*time.Hour) {
		t.Errorf("a new policy starts afresh: %+v", s)
	}
	scheduleEdit(s, &SecretChange{Rotate: &never}, now, false)
	if s.NextRotate != 0 || s.Rotate != "never" {
		t.Errorf("never: %+v", s)
	}
}

// A rotation answered by a revision that expires before the next
// rotation comes due again RotateRetryDelay later, as Juju's does, so the
// owner renews it before it expires; an expiry nearer than that, or after
// the next rotation, leaves the period alone.
func TestRotationAnsweredByAnExpiringRevisionComesEarly(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	hourly := "hourly"
	for _, c := range []struct {
		what   string
		expire time.Duration // after the answer; 0: none
		next   time.Duration // after the answer
	}{
		{"no expiry", 0, time.Hour},
		{"expires after the next rotation", 2 * time.Hour, time.Hour},
		{"expires before the next rotation", 30 * time.Minute, RotateRetryDelay},
		{"expires sooner than the retry delay", 2 * time.Minute, time.Hour},
	} {
		s := &Secret{ID: dueID, OwnerKind: SecretOwnerUnit, Owner: "db/0", Revisions: []SecretRevision{{Rev: 1}}}
		scheduleEdit(s, &SecretChange{Rotate: &hourly}, at, true)
		s.RotateDue, s.RotateRev, s.NextRotate = 1, 1, at+int64(time.Hour+RotateRetryDelay)
		now := at + int64(time.Hour+time.Minute)
		s.Revisions = append(s.Revisions, SecretRevision{Rev: 2})
		change := &SecretChange{}
		if c.expire != 0 {
			exp := now + int64(c.expire)
			change.Expire = &exp
		}
		scheduleEdit(s, change, now, true)
		if s.RotateRev != 0 || s.NextRotate != now+int64(c.next) {
			t.Errorf("%s: next rotation %s after the answer (rotate rev %d), want %s", c.what, time.Duration(s.NextRotate-now), s.RotateRev, c.next)
		}
	}
	// A set that answers no rotation keeps the period, whatever expires.
	s := &Secret{ID: dueID, OwnerKind: SecretOwnerUnit, Owner: "db/0", Revisions: []SecretRevision{{Rev: 1}}}
	soon := at + int64(30*time.Minute)
	scheduleEdit(s, &SecretChange{Rotate: &hourly, Expire: &soon}, at, true)
	if s.NextRotate != at+int64(time.Hour) {
		t.Errorf("a new secret expiring before its first rotation: next rotation %s on, want an hour", time.Duration(s.NextRotate-at))
	}
}
