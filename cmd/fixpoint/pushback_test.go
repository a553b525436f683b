package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// writeDemoVariant writes an environment next to a copy of the demo's
// charms' paths: the demo's services with body as its services and
// relations.
func writeDemoVariant(t *testing.T, name, body string) string {
	t.Helper()
	charms := repo("testdata", "charms")
	src := "apiVersion: \"fixpoint/v1\"\nname: \"shop\"\n" + strings.ReplaceAll(body, "CHARMS", charms) + "\n"
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPlanAndApplyPushBack: vet and plan warn about a service of more
// units than --warn-units at its file:line:col; plan summarises a long
// unit list on one short line; apply of a plan that removes a service and
// a relation is refused off a terminal without --yes (exit 2, the plan
// printed, nothing changed) and applied with it.
func TestPlanAndApplyPushBack(t *testing.T) {
	t.Parallel()
	big := writeDemoVariant(t, "big.cue", `services: {
	db: {charm: "CHARMS/db", units: 5000, config: {max_connections: 200}}
	web: {charm: "CHARMS/web", units: 2}
}
relations: "web-db": ["web:db", "db:db"]`)
	small := writeDemoVariant(t, "small.cue", `services: db: {charm: "CHARMS/db", units: 2, config: {max_connections: 200}}`)
	warning := "big.cue:4:"
	r := fixpoint(t, time.Minute, "vet", big)
	if r.code != exitOK || !strings.Contains(r.stderr, warning) || !strings.Contains(r.stderr, "warning: ") || !strings.Contains(r.stderr, "services.db.units: 5,000 units, more than 1,000 per service") {
		t.Errorf("vet of 5,000 units: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if r := fixpoint(t, time.Minute, "vet", big, "--warn-units", "5000"); r.code != exitOK || strings.Contains(r.stderr, "warning") {
		t.Errorf("vet --warn-units 5000: exit %d, %s", r.code, r.stderr)
	}

	data := t.TempDir()
	p := startUp(t, data, demoEnv)
	p.waitConverged(t, converges)

	r = fixpoint(t, 2*time.Minute, "plan", "-f", big, "--data-dir", data)
	if r.code != exitChanges || !strings.Contains(r.stdout, "+ units db/2 … db/4999 (4,998 units)\n") || !strings.Contains(r.stderr, "services.db.units: 5,000 units") {
		t.Errorf("plan of 5,000 units: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if len(r.stdout) > 500 {
		t.Errorf("plan of 5,000 units printed %d bytes:\n%.500s", len(r.stdout), r.stdout)
	}

	r = fixpoint(t, 2*time.Minute, "apply", "-f", small, "--data-dir", data)
	if r.code != exitChanges || !strings.Contains(r.stdout, "- service web (units go dying: web/0, web/1)") || !strings.Contains(r.stdout, "- relation") ||
		!strings.Contains(r.stderr, "not applied: this plan removes 1 service, 2 units, 2 relations") || !strings.Contains(r.stderr, "--yes") {
		t.Fatalf("apply of a removal without --yes: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if st := statusJSON(t, data); st.Units["web/0"] == nil || st.Units["web/0"].Life != "alive" {
		t.Fatalf("a refused apply removed web/0: %+v", st.Units["web/0"])
	}
	r = fixpoint(t, 2*time.Minute, "apply", "-f", small, "--yes", "--data-dir", data)
	if r.code != exitOK || !strings.Contains(r.stdout, "- service web") || !strings.Contains(r.stdout, "applied at index") {
		t.Fatalf("apply --yes: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestResolvedServiceAndAll: `resolved SERVICE` marks every unit of the
// service in error as one command and names them; with nothing left in
// error, a service or --all says so and exits 0; an unknown service, or
// a service with --all, exits 1. Completion offers units and services
// for resolved, units only for show-unit, services only for config.
func TestResolvedServiceAndAll(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	up := startProc(t, "up", "-f", repo("testdata", "envs", "flaky.cue"), "--data-dir", data, "--retry-min", "10m", "--retry-max", "10m")
	rafttest.Eventually(t, 2*time.Minute, "both flaky units in error", func() error {
		st := statusOf(t, data)
		if st == nil {
			return errors.New(up.out.String())
		}
		for _, name := range []string{"flaky/0", "flaky/1"} {
			if u := st.Units[name]; u == nil || u.Phase != engine.Error {
				return errors.New(jsonString(st))
			}
		}
		return nil
	})
	for args, want := range map[string]string{
		"show-unit": "flaky/0\t", "config": "flaky\tservice", "resolved": "flaky\tservice",
	} {
		r := fixpoint(t, time.Minute, "__complete", args, "--data-dir", data, "")
		if !strings.Contains(r.stdout, want) {
			t.Errorf("completion of %s offers no %q:\n%s", args, want, r.stdout)
		}
		if strings.Contains(r.stdout, "flaky\tservice") && args == "show-unit" || strings.Contains(r.stdout, "flaky/0\t") && args == "config" {
			t.Errorf("completion of %s offers the wrong kind of name:\n%s", args, r.stdout)
		}
	}
	if r := fixpoint(t, time.Minute, "resolved", "nosuch", "--data-dir", data); r.code != exitFailed || !strings.Contains(r.stderr, "service nosuch does not exist") {
		t.Errorf("resolved nosuch: exit %d, %s", r.code, r.stderr)
	}
	if r := fixpoint(t, time.Minute, "resolved", "flaky", "--all", "--data-dir", data); r.code != exitFailed || !strings.Contains(r.stderr, "not both") {
		t.Errorf("resolved flaky --all: exit %d, %s", r.code, r.stderr)
	}
	r := fixpoint(t, time.Minute, "resolved", "flaky", "--no-retry", "--data-dir", data)
	if r.code != exitOK || !strings.Contains(r.stdout, "2 units marked reconciled without a retry: flaky/0, flaky/1") {
		t.Fatalf("resolved flaky --no-retry: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	rafttest.Eventually(t, 2*time.Minute, "converged after resolved flaky --no-retry", func() error {
		st := statusOf(t, data)
		return holds(st != nil && st.Converged, jsonString(st))
	})
	for _, args := range [][]string{{"resolved", "flaky"}, {"resolved", "--all"}} {
		r := fixpoint(t, time.Minute, append(args, "--data-dir", data)...)
		if r.code != exitOK || !strings.Contains(r.stdout, "nothing to resolve") {
			t.Errorf("%v with nothing in error: exit %d\n%s\n%s", args, r.code, r.stdout, r.stderr)
		}
	}
}
