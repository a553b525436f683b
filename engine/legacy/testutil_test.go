package legacy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
)

// testUniverse is web/0, a follower, requiring db over db:3 (db/0, db/1)
// and in its peer relation cluster:1 with web/1.
func testUniverse() *charmapi.Universe {
	return &charmapi.Universe{
		API: charmapi.API, Unit: "web/0", Service: "web", Charm: "sha256:c", Life: "alive",
		Machine: "m1", Address: "10.0.0.5",
		Config:     map[string]any{"port": 8080.0, "name": "shop", "debug": true, "ratio": 0.5, "unset": nil},
		LeaderData: map[string]string{"primary": "web/1"},
		State:      map[string]string{},
		Relations: []charmapi.Relation{
			{
				Ident: "cluster:1", ID: 1, Name: "cluster", Interface: "web-cluster", Role: "peer", RemoteService: "web",
				Local: map[string]string{"private-address": "10.0.0.5"},
				App:   map[string]string{"primary": "web/1"},
				Units: map[string]map[string]string{"web/1": {"private-address": "10.0.0.6", "address": "10.0.0.6"}},
			},
			{
				Ident: "db:3", ID: 3, Name: "db", Interface: "kv", Role: "requires", RemoteService: "db",
				Local:     map[string]string{"private-address": "10.0.0.5", "database": "old", "keep": "yes"},
				App:       map[string]string{},
				RemoteApp: map[string]string{"schema": "v2"},
				Units: map[string]map[string]string{
					"db/0": {"private-address": "10.0.0.1", "host": "10.0.0.1", "port": "6379"},
					"db/1": {"private-address": "10.0.0.2", "host": "10.0.0.2"},
				},
			},
		},
	}
}

// writeCharm makes a charm directory whose hooks are the given POSIX sh
// bodies (each run with set -e).
func writeCharm(t testing.TB, hooks map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range hooks {
		script := "#!/bin/sh\nset -e\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(dir, "hooks", name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// shells are the two ways a POSIX sh hook runs, for the tests that must
// pass under both: as its own executable (the system shell, each tool call
// a process) and in fixpoint-sh (tool calls builtins).
var shells = []struct {
	name string
	opt  func(*Options)
}{
	{HookShellSystem, func(o *Options) { o.HookShell = HookShellSystem }},
	{HookShellBuiltin, func(o *Options) { o.HookShell = HookShellBuiltin; o.ShellBinary = shellBinary }},
}

// forEachShell runs f as a subtest under each of shells; f passes shell
// to runHooks (or calls it on Options) to pick it.
func forEachShell(t *testing.T, f func(t *testing.T, shell func(*Options))) {
	for _, sh := range shells {
		t.Run(sh.name, func(t *testing.T) { f(t, sh.opt) })
	}
}

// runHooks runs u's events on charmDir with the test tool binary, POSIX
// sh hooks in fixpoint-sh unless a tweak says otherwise; it returns the
// unit directory too, where hooks leave their traces.
func runHooks(t *testing.T, charmDir string, u *charmapi.Universe, tweak ...func(*Options)) (*charmapi.Result, Stats, string, error) {
	t.Helper()
	unitDir := t.TempDir()
	opts := Options{CharmDir: charmDir, UnitDir: unitDir, ToolsBinary: toolBinary, ShellBinary: shellBinary, Model: "shop"}
	for _, f := range tweak {
		f(&opts)
	}
	res, stats, err := Run(context.Background(), opts, u)
	return res, stats, unitDir, err
}

// trace reads what hooks appended to $FIXPOINT_UNIT_DIR/trace.
func trace(t *testing.T, unitDir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(unitDir, "trace"))
	if err != nil {
		t.Fatalf("hooks left no trace: %v", err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

func ev(hook, rel, unit, app, departing string) charmapi.Event {
	return charmapi.Event{Hook: hook, Relation: rel, RemoteUnit: unit, RemoteApp: app, Departing: departing}
}

func equalLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\ngot:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// readUnitFile returns the file a test hook wrote in its unit directory.
func readUnitFile(t *testing.T, unitDir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(unitDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
