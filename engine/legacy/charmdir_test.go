package legacy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
)

// TestDispatchRunsForEveryEvent is a charm packed the charmcraft way:
// dispatch at the root, hooks/install and hooks/start symlinks to it, and
// no other hooks. Juju runs dispatch for every event, naming it in
// JUJU_DISPATCH_PATH; so does the adapter.
func TestDispatchRunsForEveryEvent(t *testing.T) {
	charm := t.TempDir()
	dispatch := `#!/bin/sh
set -e
echo "$JUJU_DISPATCH_PATH|$JUJU_HOOK_NAME|$JUJU_VERSION|$JUJU_MODEL_UUID|${JUJU_AVAILABILITY_ZONE-unset}" >> "$FIXPOINT_UNIT_DIR/trace"
`
	if err := os.WriteFile(filepath.Join(charm, "dispatch"), []byte(dispatch), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(charm, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"install", "start"} {
		if err := os.Symlink("../dispatch", filepath.Join(charm, "hooks", h)); err != nil {
			t.Fatal(err)
		}
	}
	u := testUniverse()
	u.Events = []charmapi.Event{ev("install", "", "", "", ""), ev("config-changed", "", "", "", ""), ev("start", "", "", "", ""),
		ev("db-relation-changed", "db:3", "db/1", "db", ""), ev("update-status", "", "", "", "")}
	_, stats, unitDir, err := runHooks(t, charm, u)
	if err != nil {
		t.Fatal(err)
	}
	uuid := ModelUUID("shop")
	var want []string
	for _, h := range []string{"install", "config-changed", "start", "db-relation-changed", "update-status"} {
		want = append(want, "hooks/"+h+"|"+h+"|"+JujuVersion+"|"+uuid+"|")
	}
	equalLines(t, "dispatch runs", trace(t, unitDir), want)
	if stats.HooksRun != 5 || len(stats.Skipped) != 0 {
		t.Errorf("stats = %+v; want 5 runs, none skipped", stats)
	}
}

// pwdHook records where the hook runs and writes a file there, as a charm
// keeping state in its charm directory does (ops's .unit-state.db).
const pwdHook = `echo "$(pwd)|$CHARM_DIR" >> "$FIXPOINT_UNIT_DIR/trace"
echo "$JUJU_UNIT_NAME" >> own.log`

// TestEveryUnitHasItsOwnCharmDir runs two units of one service from one
// unpacked charm, as an agent does for two units on one machine: each
// runs in a charm directory of its own, and the unpacked charm is never
// written to.
func TestEveryUnitHasItsOwnCharmDir(t *testing.T) {
	charm := writeCharm(t, map[string]string{"install": pwdHook})
	var dirs []string
	for _, unit := range []string{"web/0", "web/1"} {
		u := testUniverse()
		u.Unit = unit
		u.Events = []charmapi.Event{ev("install", "", "", "", "")}
		_, _, unitDir, err := runHooks(t, charm, u)
		if err != nil {
			t.Fatal(err)
		}
		line := trace(t, unitDir)[0]
		pwd, charmDir, _ := strings.Cut(line, "|")
		want, _ := filepath.EvalSymlinks(filepath.Join(unitDir, "charm"))
		if got, _ := filepath.EvalSymlinks(pwd); got != want || charmDir != filepath.Join(unitDir, "charm") {
			t.Errorf("%s ran in %s with CHARM_DIR %s; want its own %s", unit, pwd, charmDir, filepath.Join(unitDir, "charm"))
		}
		b, err := os.ReadFile(filepath.Join(unitDir, "charm", "own.log"))
		if err != nil || string(b) != unit+"\n" {
			t.Errorf("%s's own.log = %q, %v; want only its own line", unit, b, err)
		}
		dirs = append(dirs, charmDir)
	}
	if dirs[0] == dirs[1] {
		t.Errorf("both units ran in %s", dirs[0])
	}
	if _, err := os.Stat(filepath.Join(charm, "own.log")); err == nil {
		t.Error("a hook wrote into the unpacked charm shared by every unit")
	}
}

// TestUpgradeKeepsTheCharmsOwnFiles deploys charm v1 into a unit's dir,
// lets the charm write files of its own there, then deploys v2: the new
// charm's files replace the old ones, files only v1 had are gone, and
// what the charm wrote stays, as Juju's upgrade-charm does.
func TestUpgradeKeepsTheCharmsOwnFiles(t *testing.T) {
	write := func(dir, name, body string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v1, v2, unitDir := t.TempDir(), t.TempDir(), t.TempDir()
	write(v1, "hooks/install", "v1")
	write(v1, "templates/a.conf", "a1")
	write(v1, "templates/old.conf", "old")
	write(v1, "gone/only.txt", "x")
	write(v1, ".complete", "")
	write(v2, "hooks/install", "v2")
	write(v2, "templates/a.conf", "a2")
	write(v2, "templates/new.conf", "new")
	if err := os.Symlink("install", filepath.Join(v2, "hooks", "start")); err != nil {
		t.Fatal(err)
	}
	dst, err := deployCharm(v1, "sha256:1", unitDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dst, ".complete")); err == nil {
		t.Error("the agent's unpack marker was copied into the unit's charm dir")
	}
	write(dst, ".unit-state.db", "stored")
	write(dst, "templates/rendered.conf", "mine")
	dst2, err := deployCharm(v2, "sha256:2", unitDir)
	if err != nil {
		t.Fatal(err)
	}
	if dst2 != dst {
		t.Fatalf("charm dir moved from %s to %s", dst, dst2)
	}
	for name, want := range map[string]string{
		"hooks/install": "v2", "templates/a.conf": "a2", "templates/new.conf": "new",
		".unit-state.db": "stored", "templates/rendered.conf": "mine", "hooks/start": "v2",
	} {
		if b, err := os.ReadFile(filepath.Join(dst, filepath.FromSlash(name))); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
	for _, gone := range []string{"templates/old.conf", "gone/only.txt", "gone"} {
		if _, err := os.Lstat(filepath.Join(dst, gone)); err == nil {
			t.Errorf("%s of the old charm is still there", gone)
		}
	}
	if target, err := os.Readlink(filepath.Join(dst, "hooks", "start")); err != nil || target != "install" {
		t.Errorf("hooks/start = %q, %v; want the symlink kept as a symlink to install", target, err)
	}
	// The same charm again costs nothing and changes nothing.
	write(dst, "hooks/install", "edited by the charm")
	if _, err := deployCharm(v2, "sha256:2", unitDir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "hooks", "install")); string(b) != "edited by the charm" {
		t.Errorf("an unchanged charm was deployed again: hooks/install = %q", b)
	}
}

// TestManifestCannotReachOutside: a manifest edited to name paths outside
// the charm dir removes nothing there.
func TestManifestCannotReachOutside(t *testing.T) {
	unitDir, src := t.TempDir(), t.TempDir()
	victim := filepath.Join(unitDir, "victim")
	if err := os.WriteFile(victim, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(unitDir, manifestFile), []byte(`{"source":"/elsewhere","files":["../victim","/etc/passwd"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := deployCharm(src, "sha256:1", unitDir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("a manifest entry outside the charm dir removed %s", victim)
	}
}
