package hooksh

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

func parse(t *testing.T, src string) *syntax.File {
	t.Helper()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(src), "hook")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestCheck(t *testing.T) {
	tests := []struct {
		src, reason string // reason: a part of Check's answer, "" for none
	}{
		{"set -e\nx=$(relation-get -r db:1 - db/0)\n", ""},
		{"set -euf\nset +e\nset -o errexit\nset -- a b\nset -e -- $x\n", ""},
		{"trap 'rm -f $tmp' EXIT\ntrap - EXIT\n", ""},
		{"sleep 1 &\nwait\n", "background"},
		{"f() { sleep 1 & }\n", "background"},
		{"umask 077\n", ""},
		{"umask u=rwx\n", "umask with a mode"},
		{"kill -TERM 1\n", "kill is not implemented"},
		{"trap 'x' INT TERM\n", `trap on "INT"`},
		{"trap 'x' 0\n", `trap on "0"`},
		{"trap\n", "trap prints or resets"},
		{"set -m\n", "set -m"},
		{"set -o vi\n", "set -o vi"},
		{"f() { local x=1; }\n", "local"},
		{"()0\n", "function without a name"},
	}
	for _, tt := range tests {
		got := Check(parse(t, tt.src))
		if tt.reason == "" && got != "" || !strings.Contains(got, tt.reason) {
			t.Errorf("Check(%q) = %q; want %q", tt.src, got, tt.reason)
		}
	}
}

// TestClassicCharmHooksRunInTheInterpreter: every hook of the test
// charms bench/oldhooks runs, with the library it sources, passes Load.
func TestClassicCharmHooksRunInTheInterpreter(t *testing.T) {
	for _, charm := range []string{"classic-db", "classic-web"} {
		dir, err := filepath.Abs(filepath.Join("..", "..", "..", "testdata", "charms", charm))
		if err != nil {
			t.Fatal(err)
		}
		hooks, err := filepath.Glob(filepath.Join(dir, "hooks", "*"))
		if err != nil || len(hooks) == 0 {
			t.Fatalf("no hooks in %s: %v", dir, err)
		}
		for _, h := range hooks {
			if _, _, reason := Load(h, []string{"CHARM_DIR=" + dir}); reason != "" {
				t.Errorf("%s: %s", h, reason)
			}
		}
	}
}

func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("lib.sh", "kill 0\n")
	tests := []struct{ name, body, reason string }{
		{"bash", "#!/bin/bash\necho\n", "not a POSIX sh"},
		{"parse", "#!/bin/sh\necho ${x/a/b}\n", "not POSIX sh to its parser"},
		{"lib", "#!/bin/sh\n. \"$D/lib.sh\"\n", "kill is not implemented"},
		{"missing lib", "#!/bin/sh\n. \"$D/nope.sh\"\n", "no such file"},
		{"lib from PATH", "#!/bin/sh\n. lib.sh\n", "looks up in PATH"},
		{"lib unset var", "#!/bin/sh\n. \"$UNSET/lib.sh\"\n", "named at run time"},
	}
	for _, tt := range tests {
		_, _, reason := Load(write(tt.name, tt.body), []string{"D=" + dir})
		if !strings.Contains(reason, tt.reason) {
			t.Errorf("%s: reason %q; want %q", tt.name, reason, tt.reason)
		}
	}
	write("ok.sh", "f() { umask 077; }\n")
	for name, body := range map[string]string{
		"umask in a subshell":      "#!/bin/sh\n(umask 077; touch x)\n",
		"umask in a pipeline":      "#!/bin/sh\numask 077 | cat\n",
		"umask function in $( )":   "#!/bin/sh\n. \"$D/ok.sh\"\nx=$(f)\n",
		"umask function shadowing": "#!/bin/sh\numask() { :; }\n",
	} {
		if _, _, reason := Load(write("u", body), []string{"D=" + dir}); reason == "" {
			t.Errorf("%s: loaded; want the system shell", name)
		}
	}
	f, opts, reason := Load(write("ok", "#!/bin/sh -eu\n. \"$D/ok.sh\"\nold=$(umask)\nf\n"), []string{"D=" + dir})
	if f == nil || opts != "-eu" || reason != "" {
		t.Errorf("Load of a good hook = %v, %q, %q", f, opts, reason)
	}
}

// TestRunSetsShebangOptionsAndParams: `#!/bin/sh -e` stops at the first
// failure; $0 is the hook and $1... its arguments; exit codes are sh's.
func TestRunSetsShebangOptionsAndParams(t *testing.T) {
	tests := []struct {
		opts, src, out string
		code           int
	}{
		{"-e", "echo \"$0 $1 $#\"\nfalse\necho no\n", "hook a 2\n", 1},
		{"", "false\necho yes\nexit 3\n", "yes\n", 3},
		{"", "x=$(printf 'a\\nb' | wc -l)\necho $x\n", "1\n", 0},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := Run(context.Background(), parse(t, tt.src), tt.opts, t.TempDir(), []string{"a", "b"}, os.Environ(), strings.NewReader(""), &out, &errb)
		if code != tt.code || out.String() != tt.out {
			t.Errorf("%q with %q: exit %d, %q (stderr %q); want exit %d, %q", tt.src, tt.opts, code, out.String(), errb.String(), tt.code, tt.out)
		}
	}
}

// TestUmask: umask sets the process's mask, which files the hook creates
// and the processes it starts inherit, and prints it as sh does.
func TestUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	var out, errb bytes.Buffer
	src := "umask 027\numask\n: > f1\ntouch f2\n"
	t.Chdir(dir)
	if code := Run(context.Background(), parse(t, src), "", t.TempDir(), nil, os.Environ(), strings.NewReader(""), &out, &errb); code != 0 || out.String() != "0027\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0, \"0027\\n\"", code, out.String(), errb.String())
	}
	for _, name := range []string{"f1", "f2"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: %v, mode %v; want 0640", name, err, fi.Mode().Perm())
		}
	}
}

// TestEchoAsDash: echo prints what dash's echo prints, checked against
// dash itself where it is installed.
func TestEchoAsDash(t *testing.T) {
	tests := [][]string{
		{"a\\tb"}, {"-n", "x"}, {"-e", "e\\101"}, {"x\\0101y"}, {"x\\08y"}, {"x\\9y"}, {"x\\400y"},
		{"x\\"}, {"x\\\\y"}, {"x\\qy"}, {"a\\cb", "c"}, {"a", "b"}, {}, {"-n"}, {"\\a\\b\\f\\n\\r\\v"},
	}
	dash, err := exec.LookPath("dash")
	if err != nil {
		t.Skip("no dash to compare with")
	}
	for _, args := range tests {
		want, err := exec.Command(dash, append([]string{"-c", `echo "$@"`, "_"}, args...)...).Output()
		if err != nil {
			t.Fatal(err)
		}
		got := echoAsDash(append([]string{"echo"}, args...))
		if len(got) != 3 || got[0] != "printf" || got[1] != "%s" || got[2] != string(want) {
			t.Errorf("echo %q = %q; dash prints %q", args, got, want)
		}
	}
}

// TestReadScriptBound: a script of maxScript bytes is read whole, one
// byte more is refused with a message naming it, and a missing one is an
// error: readScript reads what the file holds, up to the bound.
func TestReadScriptBound(t *testing.T) {
	dir := t.TempDir()
	atBound := filepath.Join(dir, "at")
	over := filepath.Join(dir, "over")
	data := bytes.Repeat([]byte(":\n"), maxScript/2)
	if err := os.WriteFile(atBound, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(over, append(data, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readScript(atBound)
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("readScript(%d bytes) = %d bytes, %v; want the file", len(data), len(got), err)
	}
	if _, err := readScript(over); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("readScript(%d bytes) error = %v; want larger than", len(data)+1, err)
	}
	if _, err := readScript(filepath.Join(dir, "missing")); err == nil {
		t.Error("readScript(missing) = nil error")
	}
}
