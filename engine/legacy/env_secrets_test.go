package legacy

import (
	"slices"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
)

// TestScheduledSecretHooksEnv: secret-rotate and secret-expired carry
// Juju's variables, which ops needs to build SecretRotateEvent and
// SecretExpiredEvent: the id and label for both, the revision only for
// secret-expired.
func TestScheduledSecretHooksEnv(t *testing.T) {
	r := &runEnv{}
	const id = "secret:cn0gqa6qs7s1bm0kfp8g"
	rotate := r.hookEnv(charmapi.Event{Hook: "secret-rotate", Secret: id, SecretLabel: "pw"}, "ctx")
	for _, want := range []string{"JUJU_DISPATCH_PATH=hooks/secret-rotate", "JUJU_SECRET_ID=" + id, "JUJU_SECRET_LABEL=pw"} {
		if !slices.Contains(rotate, want) {
			t.Errorf("secret-rotate's environment lacks %s: %q", want, rotate)
		}
	}
	if slices.ContainsFunc(rotate, func(kv string) bool { return len(kv) > 20 && kv[:21] == "JUJU_SECRET_REVISION=" }) {
		t.Errorf("secret-rotate's environment names a revision: %q", rotate)
	}
	expired := r.hookEnv(charmapi.Event{Hook: "secret-expired", Secret: id, SecretRevision: 3}, "ctx")
	for _, want := range []string{"JUJU_DISPATCH_PATH=hooks/secret-expired", "JUJU_SECRET_ID=" + id, "JUJU_SECRET_REVISION=3"} {
		if !slices.Contains(expired, want) {
			t.Errorf("secret-expired's environment lacks %s: %q", want, expired)
		}
	}
}
