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
// that became obsolete (no consumer tracks it). A unit's first run and
// its teardown get none. label names each secret as the unit knows it.
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
		if !seen {
			continue
		}
		ev := charmapi.Event{Secret: "secret:" + id, SecretLabel: label(id)}
		switch {
		case a.Owner:
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
