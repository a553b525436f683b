package legacy

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/legacy/hooksh"
	"github.com/fixpoint/fixpoint/engine/legacy/shebang"
)

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// TestToolOutputsThroughBothShells calls every tool of TestToolOutputs
// from a hook, under the system shell (each call a fixpoint-hook process)
// and in fixpoint-sh (each a builtin): exit code, stdout and stderr must
// be what the session answers, byte for byte, under both.
func TestToolOutputsThroughBothShells(t *testing.T) {
	forEachShell(t, func(t *testing.T, shell func(*Options)) {
		for _, tt := range toolCases() {
			if tt.tool == "no-such-tool" {
				continue // no link on PATH: sh says "not found", as it must
			}
			t.Run(tt.name, func(t *testing.T) {
				u := tt.u
				if u == nil {
					u = testUniverse()
				}
				u.Events = []charmapi.Event{tt.e}
				call := tt.tool
				for _, a := range tt.args {
					call += " " + shellQuote(a)
				}
				charm := writeCharm(t, map[string]string{tt.e.Hook: `set +e
` + call + ` > "$FIXPOINT_UNIT_DIR/out" 2> "$FIXPOINT_UNIT_DIR/err"
echo $? > "$FIXPOINT_UNIT_DIR/code"`})
				_, _, unitDir, err := runHooks(t, charm, u, shell)
				if err != nil {
					t.Fatal(err)
				}
				read := func(name string) string { return readUnitFile(t, unitDir, name) }
				code, err := strconv.Atoi(strings.TrimSpace(read("code")))
				if err != nil {
					t.Fatal(err)
				}
				got := response{Code: code, Stdout: read("out"), Stderr: read("err")}
				if want := (response{Code: tt.code, Stdout: tt.stdout, Stderr: tt.stderr}); got != want {
					t.Errorf("%s %v:\ngot  %+v\nwant %+v", tt.tool, tt.args, got, want)
				}
			})
		}
	})
}

// TestFailingToolFailsTheHookAlike: under set -e a tool's failure ends
// the hook with the tool's status and its stderr, under both shells.
func TestFailingToolFailsTheHookAlike(t *testing.T) {
	var got []string
	forEachShell(t, func(t *testing.T, shell func(*Options)) {
		charm := writeCharm(t, map[string]string{"install": `echo before >&2
x=$(relation-get -r db:99 - db/0)
echo "not reached $x"`})
		u := testUniverse()
		u.Events = []charmapi.Event{ev("install", "", "", "", "")}
		_, _, _, err := runHooks(t, charm, u, shell)
		var herr *HookError
		if !errors.As(err, &herr) {
			t.Fatalf("err = %v; want a HookError", err)
		}
		got = append(got, herr.Reason+" | "+herr.Stderr)
	})
	want := `exit status 2 | before` + "\n" + `ERROR invalid value "db:99" for flag -r: relation not found`
	for i, g := range got {
		if g != want {
			t.Errorf("%s: %q; want %q", shells[i].name, g, want)
		}
	}
}

// TestPOSIXHooksRunInFixpointSh checks which program a hook's process is:
// fixpoint-sh for POSIX sh hooks it can run faithfully, the hook itself
// (its shell) for the rest and for every hook under --hook-shell system.
func TestPOSIXHooksRunInFixpointSh(t *testing.T) {
	const probe = `readlink /proc/$$/exe > "$FIXPOINT_UNIT_DIR/exe"` + "\n"
	tests := []struct {
		name, hook, lib string
		builtin         bool
	}{
		{"sh", "#!/bin/sh\n" + probe, "", true},
		{"sh -e", "#!/bin/sh -e\n" + probe, "", true},
		{"env sh", "#!/usr/bin/env sh\n" + probe, "", true},
		{"sources a library", "#!/bin/sh\n. \"$CHARM_DIR/lib/x.sh\"\n" + probe, "x=1\n", true},
		{"bash", "#!/bin/bash\n" + probe, "", false},
		{"background job", "#!/bin/sh\n" + probe + "true & wait\n", "", false},
		{"umask", "#!/bin/sh\numask 022\n" + probe, "", true},
		{"kill", "#!/bin/sh\n" + probe + "kill -0 $$\n", "", false},
		{"library traps a signal", "#!/bin/sh\n. \"$CHARM_DIR/lib/x.sh\"\n" + probe, "trap 'echo bye' INT\n", false},
		{"library named at run time", "#!/bin/sh\nlib=x\n. \"$CHARM_DIR/lib/$lib.sh\"\n" + probe, "x=1\n", false},
		{"not POSIX to the parser", "#!/bin/sh\n" + probe + "never() { echo ${x/a/b}; }\n", "", false},
	}
	for _, tt := range tests {
		for _, sh := range shells {
			t.Run(tt.name+"/"+sh.name, func(t *testing.T) {
				charm := t.TempDir()
				for name, body := range map[string]string{"hooks/install": tt.hook, "lib/x.sh": tt.lib} {
					p := filepath.Join(charm, name)
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				u := testUniverse()
				u.Events = []charmapi.Event{ev("install", "", "", "", "")}
				_, _, unitDir, err := runHooks(t, charm, u, sh.opt)
				if err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(filepath.Join(unitDir, "exe"))
				if err != nil {
					t.Fatal(err)
				}
				inSh := strings.TrimSpace(string(b)) == shellBinary
				if want := tt.builtin && sh.name == HookShellBuiltin; inSh != want {
					t.Errorf("hook ran in %s; want in fixpoint-sh: %v", strings.TrimSpace(string(b)), want)
				}
			})
		}
	}
}

func TestShellProgramNameIsOne(t *testing.T) {
	if hooksh.ProgramName != shebang.ProgramName || filepath.Base(shellBinary) != hooksh.ProgramName {
		t.Errorf("fixpoint-sh's names differ: %s, %s, %s", hooksh.ProgramName, shebang.ProgramName, filepath.Base(shellBinary))
	}
}
