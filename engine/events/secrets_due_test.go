package events

import (
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

// TestDueEventsFireOncePerOccurrence: an owner gets secret-expired per
// revision whose expiry came due since it last ran, then secret-rotate,
// once however many occurrences landed; a unit that did not manage the
// secret before (a new leader) gets none; a secret the owner just added
// fires what came due already.
func TestDueEventsFireOncePerOccurrence(t *testing.T) {
	const id = "cn0gqa6qs7s1bm0kfp8g"
	seen := func(s model.SeenSecret) *model.Seen {
		return &model.Seen{Life: model.Alive, Secrets: map[string]model.SeenSecret{id: s}}
	}
	label := func(string) string { return "pw" }
	owner := model.SeenSecret{Latest: 2, Owner: true, RotateDue: 1, Expired: map[int]int{1: 1}}
	for name, tc := range map[string]struct {
		before *model.Seen
		after  model.SeenSecret
		want   []string
	}{
		"nothing new": {seen(owner), owner, nil},
		"both, several times": {seen(owner), model.SeenSecret{Latest: 2, Owner: true, RotateDue: 3, Expired: map[int]int{1: 2, 2: 4}},
			[]string{"secret-expired secret:" + id + "/1", "secret-expired secret:" + id + "/2", "secret-rotate secret:" + id}},
		"new leader":     {seen(model.SeenSecret{Latest: 2}), model.SeenSecret{Latest: 2, Owner: true, RotateDue: 2, Expired: map[int]int{1: 2}}, nil},
		"not the leader": {seen(owner), model.SeenSecret{Latest: 2, RotateDue: 2}, nil},
		"just added": {&model.Seen{Life: model.Alive}, model.SeenSecret{Latest: 1, Owner: true, Expired: map[int]int{1: 1}},
			[]string{"secret-expired secret:" + id + "/1"}},
	} {
		evs := SecretEvents(tc.before, seen(tc.after), label)
		var got []string
		for _, ev := range evs {
			if ev.SecretLabel != "pw" {
				t.Errorf("%s: %+v without its label", name, ev)
			}
			got = append(got, ev.String())
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: %q, want %q", name, got, tc.want)
			}
		}
	}
}
