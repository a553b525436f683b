package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

// TestQuietCharmsMatchJuju runs testdata/charms/quiet-source and
// quiet-sink, classic charms written as Juju's own application-data test
// charms are, through `up` to the fixed point: the sink's start lists no
// member of the token relation (none has joined yet), relation-get without
// a unit reads the source's application bag in its -relation-changed,
// relation-get --app KEY UNIT reads UNIT's application's bag, and both
// units, whose charms never call status-set, end with Juju's "unknown".
// A read that fails fails the sink's hook, and the environment with it.
func TestQuietCharmsMatchJuju(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := filepath.Join(dir, "quiet.cue")
	body := fmt.Sprintf(`apiVersion: "fixpoint/v1"
name: "quiet"
services: {
	"quiet-source": {charm: %q, units: 1}
	"quiet-sink": {charm: %q, units: 1}
}
relations: token: ["quiet-sink:token", "quiet-source:token"]
`, repo("testdata", "charms", "quiet-source"), repo("testdata", "charms", "quiet-sink"))
	if err := os.WriteFile(env, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	up := startUp(t, data, env)
	st := up.waitConverged(t, converges)
	for _, unit := range []string{"quiet-source/0", "quiet-sink/0"} {
		us := st.Units[unit]
		if us == nil {
			t.Fatalf("%s missing from status:\n%s", unit, up.out)
		}
		if us.Status != (model.Status{State: "unknown"}) {
			t.Errorf("%s status = %+v; want Juju's unknown for a charm that sets none", unit, us.Status)
		}
	}
	seen, err := os.ReadFile(filepath.Join(data, "agent", "units", "quiet-sink-0", "seen.log"))
	if err != nil {
		t.Fatalf("the sink left no seen.log: %v\n%s", err, up.out)
	}
	for _, re := range []string{
		`(?m)^start token:\d+: \[\]$`,
		`(?m)^app changed: token=abc$`,
		`(?m)^quiet-source/0 changed: token=(abc)? members=\[quiet-source/0 \]$`,
	} {
		if !regexp.MustCompile(re).Match(seen) {
			t.Errorf("seen.log has no line matching %s:\n%s", re, seen)
		}
	}
}
