package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/legacy"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// recorderCharm writes a classic charm into dir/recorder: every hook
// notes its environment's name and uuid in the unit's directory and
// appends "ENV UNIT HOOK UNIT_DIR" to the file its config's record names
// (outside the agent, so that the lines outlive the unit's directory).
// db provides and web requires its interface; db keeps a storage
// instance.
func recorderCharm(t *testing.T, dir string) string {
	t.Helper()
	hook := `#!/bin/sh
set -e
echo "$JUJU_MODEL_NAME $JUJU_MODEL_UUID" >"$FIXPOINT_UNIT_DIR/model.txt"
rec=$(config-get record)
[ -z "$rec" ] || echo "$JUJU_MODEL_NAME $JUJU_UNIT_NAME $JUJU_HOOK_NAME $FIXPOINT_UNIT_DIR" >>"$rec"
status-set active "in $JUJU_MODEL_NAME"
`
	files := map[string]string{
		"recorder/metadata.yaml": `name: recorder
summary: records its hooks and its environment, for tests
provides: {p: {interface: rec}}
requires: {r: {interface: rec}}
storage: {data: {type: filesystem}}
`,
		"recorder/config.yaml": "options:\n  record: {type: string, default: \"\", description: where hooks append their lines}\n",
	}
	for _, h := range []string{"install", "config-changed", "start", "stop", "remove", "leader-elected",
		"p-relation-joined", "p-relation-changed", "p-relation-departed", "p-relation-broken",
		"r-relation-joined", "r-relation-changed", "r-relation-departed", "r-relation-broken",
		"data-storage-attached", "data-storage-detaching"} {
		files["recorder/hooks/"+h] = hook
	}
	writeFiles(t, dir, files)
	for name := range files {
		if strings.HasPrefix(name, "recorder/hooks/") {
			if err := os.Chmod(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return filepath.Join(dir, "recorder")
}

// recorderEnv writes environment name's file into dir: db and web of the
// recorder charm, one unit each, related, recording into record, with a
// user secret.
func recorderEnv(t *testing.T, dir, name, charm, record string) string {
	t.Helper()
	path := filepath.Join(dir, name+".cue")
	env := fmt.Sprintf(`apiVersion: "fixpoint/v1"
name: %q
services: {
	db: {charm: %q, units: 1, config: record: %q}
	web: {charm: %q, units: 1, config: record: %q}
}
relations: "web-db": ["web:r", "db:p"]
secrets: "api-key": {content: key: file: "./%s.key"}
`, name, charm, record, charm, record, name)
	if err := os.WriteFile(filepath.Join(dir, name+".key"), []byte("key-of-"+name), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// hookLines are the lines record holds of environment env's unit.
func hookLines(t *testing.T, record, env, unit string) []string {
	t.Helper()
	b, _ := os.ReadFile(record)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 4 && f[0] == env && f[1] == unit {
			out = append(out, f[2]+" "+f[3])
		}
	}
	return out
}

// Two environments on the three-server TLS topology share one remote
// agent's machine: both converge with their own db/0 and web/0, each
// unit's hooks see their own environment's name and uuid and run in
// their own directory; removing one runs its units' dying hooks on the
// agent and leaves no directory, storage or secret of it, while the
// other stays converged.
func TestEnvironmentsSideBySideOnOneAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four processes; skipped in -short")
	}
	c := startCluster(t, 3, true, "--agent-ttl", "5s")
	c.agent("m1")
	c.waitMachines("m1")
	dir := t.TempDir()
	charm := recorderCharm(t, dir)
	record := filepath.Join(dir, "hooks.log")
	must := func(args ...string) run {
		t.Helper()
		r := c.cli(args...)
		if r.code != 0 {
			t.Fatalf("fixpoint %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		return r
	}
	must("apply", "-f", recorderEnv(t, dir, "shop", charm, record), "--wait", "--timeout", "4m")
	must("env", "add", "dev")
	must("apply", "-f", recorderEnv(t, dir, "dev", charm, record), "-e", "dev", "--wait", "--timeout", "4m")
	devUUID := ""
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	info, err := c.api().ShowEnv(ctx, "dev")
	if err != nil {
		t.Fatal(err)
	}
	devUUID = info.UUID

	agentDir := c.agentDirs["m1"]
	for _, u := range []struct{ env, uuid, dir string }{
		{"shop", legacy.ModelUUID("shop"), filepath.Join(agentDir, "units", "db-0")},
		{"dev", devUUID, filepath.Join(agentDir, "envs", "dev", "units", "db-0")},
	} {
		got := strings.TrimSpace(readFile(t, filepath.Join(u.dir, "model.txt")))
		if got != u.env+" "+u.uuid {
			t.Errorf("%s's db/0 saw JUJU_MODEL_NAME and JUJU_MODEL_UUID %q; want %q", u.env, got, u.env+" "+u.uuid)
		}
		lines := hookLines(t, record, u.env, "db/0")
		if len(lines) == 0 {
			t.Errorf("%s's db/0 recorded no hook", u.env)
		}
		for _, line := range lines {
			if !strings.HasSuffix(line, " "+u.dir) {
				t.Errorf("%s's db/0 ran %q outside its directory %s", u.env, line, u.dir)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(agentDir, "envs", "dev", "storage", "db-0")); err != nil {
		t.Errorf("dev's db/0 has no storage of its own: %v", err)
	}
	if r := must("secrets", "-e", "dev"); !strings.Contains(r.stdout, "api-key") {
		t.Errorf("dev's secrets:\n%s", r.stdout)
	}

	// Removing dev without --yes changes nothing and exits 2.
	if r := c.cli("env", "remove", "dev"); r.code != 2 || !strings.Contains(r.stderr, "pass --yes") {
		t.Fatalf("env remove dev without --yes: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := must("env", "remove", "dev", "--yes"); !strings.Contains(r.stdout, "environment dev removed") {
		t.Errorf("env remove dev: %s", r.stdout)
	}
	for _, unit := range []string{"db/0", "web/0"} {
		lines := hookLines(t, record, "dev", unit)
		var hooks []string
		for _, l := range lines {
			hooks = append(hooks, strings.Fields(l)[0])
		}
		side := map[string]string{"db/0": "p", "web/0": "r"}[unit]
		for _, want := range []string{side + "-relation-departed", side + "-relation-broken", "stop", "remove"} {
			if !slices.Contains(hooks, want) {
				t.Errorf("dev's %s did not run %s on its removal; it ran %v", unit, want, hooks)
			}
		}
		if unit == "db/0" && !slices.Contains(hooks, "data-storage-detaching") {
			t.Errorf("dev's db/0 did not run data-storage-detaching; it ran %v", hooks)
		}
	}
	rafttest.Eventually(t, time.Minute, "dev's directory removed on the agent", func() error {
		if _, err := os.Stat(filepath.Join(agentDir, "envs", "dev")); !os.IsNotExist(err) {
			return fmt.Errorf("envs/dev: %v", err)
		}
		return nil
	})
	if r := c.cli("secrets", "-e", "dev"); r.code == 0 || !strings.Contains(r.stderr, "dev") {
		t.Errorf("secrets of the removed dev: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := must("envs"); strings.Contains(r.stdout, "dev ") {
		t.Errorf("envs after removing dev:\n%s", r.stdout)
	}

	// shop never noticed: converged, its units where they were.
	var st *engine.Status
	rafttest.Eventually(t, time.Minute, "shop converged", func() error {
		st = c.status()
		if st == nil || !st.Converged || len(st.Units) != 2 {
			return fmt.Errorf("status %s", jsonString(st))
		}
		return nil
	})
	if got := strings.TrimSpace(readFile(t, filepath.Join(agentDir, "units", "db-0", "model.txt"))); got != "shop "+legacy.ModelUUID("shop") {
		t.Errorf("shop's db/0 now records %q", got)
	}
	for _, unit := range []string{"db/0", "web/0"} {
		for _, l := range hookLines(t, record, "shop", unit) {
			if h := strings.Fields(l)[0]; h == "stop" || h == "remove" {
				t.Errorf("shop's %s ran %s", unit, h)
			}
		}
	}
}

// An agent of the previous release, which keeps no environments apart,
// is handed the default environment's work alone: on its machine the
// default environment converges and converges again after a change,
// while another environment's units placed there are never run by it
// (they would run in the default units' directories).
func TestOldAgentKeepsToTheDefaultEnvironment(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the previous release and starts four processes; skipped in -short")
	}
	old := buildRelease(t, previousRelease)
	c := newCluster(t)
	c.bins["m1"] = old
	c.start(3, false)
	c.agent("m1")
	c.waitMachines("m1")
	if r := c.cli("apply", "-f", demoEnv, "--yes", "--wait", "--timeout", "4m"); r.code != 0 {
		t.Fatalf("apply the demo: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := c.cli("env", "add", "dev"); r.code != 0 {
		t.Fatalf("env add dev: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	dir := t.TempDir()
	dev := filepath.Join(dir, "dev.cue")
	if err := os.WriteFile(dev, []byte(fmt.Sprintf(`apiVersion: "fixpoint/v1"
name: "dev"
services: db: {charm: %q, units: 1}
`, repo("testdata", "charms", "db"))), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := c.cli("apply", "-f", dev, "-e", "dev"); r.code != 0 {
		t.Fatalf("apply dev: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	devStatus := func() *engine.Status { return statusFrom(c.api().WithEnv("dev")) }
	rafttest.Eventually(t, time.Minute, "dev's db/0 placed on m1", func() error {
		st := devStatus()
		if st == nil || st.Units["db/0"] == nil || st.Units["db/0"].Machine != "m1" {
			return fmt.Errorf("dev's status %s", jsonString(st))
		}
		return nil
	})
	// A change of the default environment after dev's deploy: the old
	// agent polls, is handed it and runs it.
	if r := c.cli("config", "db", "max_connections=300", "--wait", "--timeout", "4m"); r.code != 0 {
		t.Fatalf("config db: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	st := c.status()
	if st == nil || !st.Converged {
		t.Fatalf("the default environment after the change: %s", jsonString(st))
	}
	if u := devStatus().Units["db/0"]; u == nil || u.Reconciles != 0 {
		t.Errorf("dev's db/0 ran on the old agent: %s", jsonString(u))
	}
	if _, err := os.Stat(filepath.Join(c.agentDirs["m1"], "envs")); !os.IsNotExist(err) {
		t.Errorf("the old agent has an envs directory: %v", err)
	}
}
