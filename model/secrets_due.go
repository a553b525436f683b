package model

import (
	"fmt"
	"time"
)

// Rotation and expiry of Juju secrets, on Juju's rules. The state holds
// the schedule; time enters only through commands: the leader's engine
// watches the schedule and, when a secret is due, proposes OpSecretDue
// with its clock, which records the occurrence in the secret. The owner's
// universe then moves, and the hook (secret-rotate, secret-expired) is
// derived from what the owner last saw (Seen), once per occurrence.

// Delays before a due secret comes due again when its owner did not
// react, as Juju's core/secrets.
const (
	// RotateRetryDelay is how long after a rotation came due it comes
	// due again if the owner added no revision meanwhile.
	RotateRetryDelay = 5 * time.Minute
	// ExpireRetryDelay is how long after a revision's expiry came due it
	// comes due again while the revision is still kept.
	ExpireRetryDelay = 5 * time.Minute
)

// MaxSecretDue caps the occurrences one OpSecretDue command records: the
// engine proposes the rest in the next.
const MaxSecretDue = 1024

// SecretDue records rotations and revision expiries that came due at the
// command's Time: OpSecretDue.
type SecretDue struct {
	// Rotate lists the ids of secrets whose rotation came due.
	Rotate []string `json:"rotate,omitempty"`
	// Expire lists the revisions whose expiry came due.
	Expire []SecretRevisionRef `json:"expire,omitempty"`
}

// SecretRevisionRef names one revision of one secret.
type SecretRevisionRef struct {
	ID  string `json:"id"`
	Rev int    `json:"rev"`
}

// NextRotateTime is when policy rotates a secret last rotated (or set)
// at last, never before now, as Juju's RotatePolicy.NextRotateTime; 0
// for "never" or no policy.
func NextRotateTime(policy string, last, now int64) int64 {
	t := time.Unix(0, last).UTC()
	switch policy {
	case "hourly":
		t = t.Add(time.Hour)
	case "daily":
		t = t.AddDate(0, 0, 1)
	case "weekly":
		t = t.AddDate(0, 0, 7)
	case "monthly":
		t = t.AddDate(0, 1, 0)
	case "quarterly":
		t = t.AddDate(0, 3, 0)
	case "yearly":
		t = t.AddDate(1, 0, 0)
	default:
		return 0
	}
	return max(t.UnixNano(), now)
}

// DueAt is when the revision's expiry next comes due (unix nanoseconds),
// 0 when it has none: its expiry, then every ExpireRetryDelay after the
// last occurrence while the revision is kept.
func (r *SecretRevision) DueAt() int64 {
	switch {
	case r.Expire == 0:
		return 0
	case r.ExpiredAt != 0:
		return r.ExpiredAt + int64(ExpireRetryDelay)
	}
	return r.Expire
}

// SecretTime is how the universe, the hook tools and the API show a
// secret's time (unix nanoseconds): RFC 3339 in UTC, "" for none.
func SecretTime(ns int64) string {
	if ns == 0 {
		return ""
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339)
}

// Scheduled reports whether s has hooks on a schedule: an operator's
// user secret has no owner unit to run them.
func (s *Secret) Scheduled() bool { return s.OwnerKind != SecretOwnerUser }

// LatestExpire is when the latest revision expires, 0 for never.
func (s *Secret) LatestExpire() int64 {
	if len(s.Revisions) == 0 {
		return 0
	}
	return s.Revisions[len(s.Revisions)-1].Expire
}

// Expired lists the kept revisions whose expiry came due, with how many
// times each did: what the owner's universe shows.
func (s *Secret) Expired() map[int]int {
	var out map[int]int
	for _, r := range s.Revisions {
		if r.ExpireDue > 0 {
			if out == nil {
				out = map[int]int{}
			}
			out[r.Rev] = r.ExpireDue
		}
	}
	return out
}

// check refuses an empty, oversized or repetitive record.
func (d *SecretDue) check() error {
	n := len(d.Rotate) + len(d.Expire)
	if n == 0 {
		return fmt.Errorf("secret-due command records nothing: name a secret to rotate or a revision to expire")
	}
	if n > MaxSecretDue {
		return fmt.Errorf("secret-due command records %d occurrences; the limit is %d", n, MaxSecretDue)
	}
	seen := make(map[SecretRevisionRef]bool, n)
	for _, id := range d.Rotate {
		if err := CheckSecretID(id); err != nil {
			return fmt.Errorf("secret-due rotate %s: %w", Quote(id, 24), err)
		}
		if k := (SecretRevisionRef{ID: id}); seen[k] {
			return fmt.Errorf("secret-due rotate names secret:%s twice", id)
		} else {
			seen[k] = true
		}
	}
	for _, r := range d.Expire {
		if err := CheckSecretID(r.ID); err != nil {
			return fmt.Errorf("secret-due expire %s: %w", Quote(r.ID, 24), err)
		}
		if r.Rev < 1 {
			return fmt.Errorf("secret-due expire secret:%s: revision %d; revisions start at 1", r.ID, r.Rev)
		}
		if seen[r] {
			return fmt.Errorf("secret-due expire names secret:%s revision %d twice", r.ID, r.Rev)
		}
		seen[r] = true
	}
	return nil
}

// applySecretDue records the occurrences of d that are due at now, each
// on its own: one that is not (already recorded by an earlier command,
// its secret or revision gone, its schedule moved) is skipped with the
// reason, so that a leader's repeated or late proposal fires nothing
// twice. It returns the skipped and the owners whose universes moved.
func (st *State) applySecretDue(index uint64, now int64, d *SecretDue) (skipped, moved []string) {
	edited := map[string]*Secret{}
	edit := func(id string) *Secret {
		if s := edited[id]; s != nil {
			return s
		}
		s := st.Secrets[id]
		if s == nil || !s.Scheduled() {
			return nil
		}
		c := s.copy()
		edited[id] = c
		return c
	}
	for _, id := range d.Rotate {
		s := edit(id)
		switch {
		case s == nil:
			skipped = append(skipped, fmt.Sprintf("secret:%s rotate: no such secret with an owner", id))
		case s.NextRotate == 0 || s.NextRotate > now:
			skipped = append(skipped, fmt.Sprintf("secret:%s rotate: not due", id))
		default:
			s.RotateDue++
			s.RotateRev = s.Latest()
			s.NextRotate = now + int64(RotateRetryDelay)
		}
	}
	for _, ref := range d.Expire {
		s := edit(ref.ID)
		var r *SecretRevision
		if s != nil {
			r = s.Revision(ref.Rev)
		}
		switch {
		case r == nil:
			skipped = append(skipped, fmt.Sprintf("secret:%s/%d expire: no such revision of a secret with an owner", ref.ID, ref.Rev))
		case r.DueAt() == 0 || r.DueAt() > now:
			skipped = append(skipped, fmt.Sprintf("secret:%s/%d expire: not due", ref.ID, ref.Rev))
		default:
			r.ExpireDue++
			r.ExpiredAt = now
		}
	}
	owners := map[string]bool{}
	for _, id := range sortedKeys(edited) {
		s := edited[id]
		if s.RotateDue == st.Secrets[id].RotateDue && sameExpiries(s, st.Secrets[id]) {
			continue
		}
		s.Index = index
		st.putSecret(id, s)
		owners[s.Owner] = true
	}
	return skipped, sortedKeys(owners)
}

// sameExpiries reports whether a and b, one secret before and after an
// edit, recorded the same expiry occurrences.
func sameExpiries(a, b *Secret) bool {
	for i := range a.Revisions {
		if a.Revisions[i].ExpireDue != b.Revisions[i].ExpireDue {
			return false
		}
	}
	return true
}

// scheduleEdit moves s's schedule for an owner's add or set c at now:
// a new or changed rotate policy starts its period afresh; a new revision
// answers a rotation that came due, so the next is a period on (or, as
// in Juju, RotateRetryDelay on when the new revision expires between the
// two, so that the owner renews it before it lapses); --expire sets the
// new revision's expiry, or the latest's when there is none. newRev says
// whether c added a revision (the last of s.Revisions).
func scheduleEdit(s *Secret, c *SecretChange, now int64, newRev bool) {
	answered := false
	if c.Rotate != nil && (*c.Rotate != s.Rotate || s.NextRotate == 0) {
		s.Rotate = *c.Rotate
		s.NextRotate, s.RotateRev = NextRotateTime(s.Rotate, now, now), 0
	} else if newRev && s.RotateRev != 0 {
		s.NextRotate, s.RotateRev = NextRotateTime(s.Rotate, now, now), 0
		answered = true
	}
	if len(s.Revisions) == 0 {
		return
	}
	latest := &s.Revisions[len(s.Revisions)-1]
	if c.Expire != nil {
		latest.Expire, latest.ExpiredAt = *c.Expire, 0
	}
	early := now + int64(RotateRetryDelay)
	if answered && latest.Expire != 0 && latest.Expire < s.NextRotate && early < latest.Expire {
		s.NextRotate = early
	}
}
