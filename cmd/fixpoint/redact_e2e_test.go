package main

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/model"
)

// TestSecretsAreNotPrinted: with the demo converged, the password db
// hands web and db's secret seed appear in no output of logs, debug
// universe, show-unit, config, debug explain or status, only their
// redactions; --reveal shows them to the operator.
func TestSecretsAreNotPrinted(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	p := startUp(t, data, demoEnv)
	p.waitConverged(t, converges)
	dd := []string{"--data-dir", data}
	const seed = "fixpoint-demo"
	sum := sha256.Sum256([]byte(seed + "/web"))
	password := hex.EncodeToString(sum[:])[:16]

	for _, c := range []struct {
		args []string
		want string // a redaction the output shows
	}{
		{[]string{"logs"}, model.Redact(password)},
		{[]string{"logs", "db/0", "--format", "json"}, model.Redact(password)},
		{[]string{"debug", "universe", "web/0"}, model.Redact(password)},
		{[]string{"debug", "universe", "db/0"}, model.Redact(seed)},
		{[]string{"show-unit", "db/0"}, model.Redact(password)},
		{[]string{"show-unit", "db/0", "-o", "json"}, model.Redact(password)},
		{[]string{"config", "db"}, model.Redact(seed)},
		{[]string{"config", "db", "-o", "json"}, model.Redact(seed)},
		{[]string{"debug", "explain", "web/0"}, ""},
		{[]string{"status", "--format", "json"}, ""},
	} {
		r := fixpoint(t, time.Minute, append(c.args, dd...)...)
		if r.code != 0 {
			t.Errorf("fixpoint %v: exit %d\n%s%s", c.args, r.code, r.stdout, r.stderr)
			continue
		}
		out := r.stdout + r.stderr
		for _, s := range []string{password, seed} {
			if strings.Contains(out, s) {
				t.Errorf("fixpoint %v prints the secret %s:\n%s", c.args, s, out)
			}
		}
		if c.want != "" && !strings.Contains(out, c.want) {
			t.Errorf("fixpoint %v lacks %s:\n%s", c.args, c.want, out)
		}
	}
	r := fixpoint(t, time.Minute, append([]string{"logs", "db"}, dd...)...)
	if !strings.Contains(r.stdout, "relations.db:") || !strings.Contains(r.stdout, "password: (unset) -> <redacted sha256:") {
		t.Errorf("logs db does not show the password's change redacted:\n%s", r.stdout)
	}

	// The operator (the data dir's token) may see the values.
	for _, args := range [][]string{{"logs", "db", "--reveal"}, {"debug", "universe", "web/0", "--reveal"}, {"config", "db", "--reveal"}} {
		r := fixpoint(t, time.Minute, append(args, dd...)...)
		if r.code != 0 || !(strings.Contains(r.stdout, password) || strings.Contains(r.stdout, seed)) {
			t.Errorf("fixpoint %v: exit %d, no value shown\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}
