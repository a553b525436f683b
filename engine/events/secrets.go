package events

import (
	"slices"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// Secret hooks.
const (
	SecretChanged = "secret-changed"
	SecretRemove  = "secret-remove"
	SecretRotate  = "secret-rotate"
	SecretExpired = "secret-expired"
)

// SecretEvents derives the secret hooks between two Seens' secrets, on
// Juju's rules: a consumer that tracks a revision gets secret-changed
// when a newer one appears; an owner gets secret-remove for each revision
// that became obsolete (no consumer tracks it). The owner that manages a
// secret (the unit, or its service's leader) gets secret-expired for each
// revision whose expiry came due again, then secret-rotate when a rotation
// did (DueEvents). A unit's first run and its teardown get none. label
// names each secret as the unit knows it.
func SecretEvents(before, after *model.Seen, label func(id string) string) []charmapi.Event {
	if before == nil || after == nil || after.Life == model.Dying || len(after.Secrets) == 0 {
		return nil
	}
	ids := make([]string, 0, len(after.Secrets))
	for id := range after.Secrets {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []charmapi.Event
	for _, id := range ids {
		a := after.Secrets[id]
		b, seen := before.Secrets[id]
		ev := charmapi.Event{Secret: "secret:" + id, SecretLabel: label(id)}
		if !seen {
			// A secret the owner just added: its schedule may already
			// have come due.
			if a.Owner {
				out = append(out, DueEvents(ev, model.SeenSecret{Owner: true}, a)...)
			}
			continue
		}
		switch {
		case a.Owner:
			if b.Owner {
				out = append(out, DueEvents(ev, b, a)...)
			}
			for _, rev := range a.Obsolete {
				if !slices.Contains(b.Obsolete, rev) {
					e := ev
					e.Hook, e.SecretRevision = SecretRemove, rev
					out = append(out, e)
				}
			}
		case a.Tracked > 0 && a.Latest > b.Latest && a.Tracked < a.Latest:
			ev.Hook = SecretChanged
			out = append(out, ev)
		}
	}
	return out
}

// DueEvents derives an owner's schedule hooks between two views of one
// secret (ev names it): secret-expired for each revision whose expiry
// came due since, with its revision, then secret-rotate if a rotation
// came due since. However many occurrences landed between two runs, each
// hook fires once. An owner that did not manage the secret before (a new
// leader) waits for the next occurrence, a retry, rather than firing one
// its predecessor had.
func DueEvents(ev charmapi.Event, before, after model.SeenSecret) []charmapi.Event {
	if !after.Owner || !before.Owner {
		return nil
	}
	var out []charmapi.Event
	revs := make([]int, 0, len(after.Expired))
	for rev := range after.Expired {
		revs = append(revs, rev)
	}
	slices.Sort(revs)
	for _, rev := range revs {
		if after.Expired[rev] > before.Expired[rev] {
			e := ev
			e.Hook, e.SecretRevision = SecretExpired, rev
			out = append(out, e)
		}
	}
	if after.RotateDue > before.RotateDue {
		e := ev
		e.Hook = SecretRotate
		out = append(out, e)
	}
	return out
}
