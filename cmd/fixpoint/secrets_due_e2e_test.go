package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// expiringCharm writes a classic charm whose install hook adds a secret
// that expires a few seconds on (--expire as a duration, as Juju's) and
// whose secret-expired hook records what Juju's variables named, then
// removes the expired revision as Juju asks an owner to.
func expiringCharm(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"metadata.yaml": "name: expiring\nsummary: adds a secret that expires\ndescription: a test charm\n",
		"hooks/install": `#!/bin/sh
set -e
secret-add --expire 3s --label soon key-one=first > "$CHARM_DIR/.added"
status-set active "added $(cat "$CHARM_DIR/.added")"
`,
		"hooks/secret-expired": `#!/bin/sh
set -e
status-set active "expired $JUJU_SECRET_ID/$JUJU_SECRET_REVISION label $JUJU_SECRET_LABEL added $(cat "$CHARM_DIR/.added")"
secret-remove "$JUJU_SECRET_ID" --revision "$JUJU_SECRET_REVISION"
`,
	}
	writeFiles(t, dir, files)
}

// TestSecretExpiredFiresOnItsSchedule: a classic charm adds a secret that
// expires in seconds; when it does, the leader's engine records the
// occurrence and the owner's secret-expired hook runs with
// JUJU_SECRET_ID, JUJU_SECRET_LABEL and JUJU_SECRET_REVISION naming it.
func TestSecretExpiredFiresOnItsSchedule(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	expiringCharm(t, filepath.Join(dir, "expiring"))
	env := filepath.Join(dir, "env.cue")
	if err := os.WriteFile(env, []byte("apiVersion: \"fixpoint/v1\"\nname: \"expiry\"\nservices: expiring: {charm: \"./expiring\", units: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	up := startUp(t, data, env)
	up.waitConverged(t, 2*time.Minute)
	var msg string
	rafttest.Eventually(t, 2*time.Minute, "secret-expired ran", func() error {
		st := statusOf(t, data)
		if st == nil {
			return fmt.Errorf("no status:\n%s", up.out)
		}
		u := st.Units["expiring/0"]
		if u == nil || !strings.HasPrefix(u.Status.Message, "expired ") {
			return fmt.Errorf("expiring/0: %s", jsonString(u))
		}
		msg = u.Status.Message
		return nil
	})
	var id, label, added string
	var rev int
	if _, err := fmt.Sscanf(msg, "expired %s label %s added %s", &id, &label, &added); err != nil {
		t.Fatalf("status %q: %v", msg, err)
	}
	id, revText, _ := strings.Cut(id, "/")
	if _, err := fmt.Sscan(revText, &rev); err != nil || id != added || rev != 1 || label != "soon" {
		t.Fatalf("secret-expired named %s revision %q label %q; the hook added %s with label soon", id, revText, label, added)
	}
}
