package legacy

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/legacy/hooktool"
)

// toolHook is a classic db-relation-changed hook: it reads the remote
// unit's settings and its own with relation-get, writes what it read back
// with relation-set (arguments and --file -), and records which program
// its relation-get link points at.
const toolHook = `host=$(relation-get host "$JUJU_REMOTE_UNIT")
port=$(relation-get port "$JUJU_REMOTE_UNIT")
mine=$(relation-get database "$JUJU_UNIT_NAME")
relation-set "seen=$host:$port" "was=$mine"
printf 'via-file=yes\n' | relation-set --file -
basename "$(readlink "$(command -v relation-get)")" > "$FIXPOINT_UNIT_DIR/program"`

// runToolHook runs toolHook through the program tools, returning the
// relation's settings afterwards and the program the links named.
func runToolHook(t *testing.T, tools string, more ...func(*Options)) (map[string]string, string) {
	t.Helper()
	charm := writeCharm(t, map[string]string{"db-relation-changed": toolHook})
	u := testUniverse()
	u.Events = []charmapi.Event{ev("db-relation-changed", "db:3", "db/0", "db", "")}
	res, stats, unitDir, err := runHooks(t, charm, u, append([]func(*Options){func(o *Options) { o.ToolsBinary = tools }}, more...)...)
	if err != nil {
		t.Fatal(err)
	}
	if stats.ToolCalls != 5 {
		t.Errorf("Stats.ToolCalls = %d; want the hook's 3 relation-get and 2 relation-set", stats.ToolCalls)
	}
	program, err := os.ReadFile(filepath.Join(unitDir, "program"))
	if err != nil {
		t.Fatal(err)
	}
	return res.Relations["db:3"].Local, strings.TrimSpace(string(program))
}

func wantToolHookSettings(t *testing.T, got map[string]string) {
	t.Helper()
	want := map[string]string{"private-address": "10.0.0.5", "database": "old", "keep": "yes",
		"seen": "10.0.0.1:6379", "was": "old", "via-file": "yes"}
	if len(got) != len(want) {
		t.Fatalf("settings after the hook = %v; want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("settings[%q] = %q; want %q (all: %v)", k, got[k], v, got)
		}
	}
}

func TestSmallToolProgramServesClassicHook(t *testing.T) {
	got, program := runToolHook(t, toolBinary)
	if program != hooktool.ProgramName {
		t.Errorf("relation-get links to %q; want %s", program, hooktool.ProgramName)
	}
	wantToolHookSettings(t, got)
}

func TestFallbackFixpointBinaryServesClassicHook(t *testing.T) {
	got, program := runToolHook(t, fallbackBinary)
	if program != filepath.Base(fallbackBinary) {
		t.Errorf("relation-get links to %q; want the fixpoint stand-in %s", program, filepath.Base(fallbackBinary))
	}
	wantToolHookSettings(t, got)
}

func TestToolProgramRefusesDirectUse(t *testing.T) {
	out, err := exec.Command(toolBinary, "--protocol").Output()
	if want := strconv.Itoa(hooktool.ProtocolVersion); err != nil || strings.TrimSpace(string(out)) != want {
		t.Fatalf("fixpoint-hook --protocol = %q, %v; want %s", out, err, want)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(toolBinary, "relation-get")
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != hooktool.ExitUsage || !strings.Contains(stderr.String(), "program behind the Juju hook tools") {
		t.Errorf("fixpoint-hook relation-get: %v, stderr %q; want exit 2 saying what the program is", err, stderr.String())
	}
}

// locator is a toolLocator whose fallback is exe and whose warnings go to
// the returned buffer.
func locator(t *testing.T, exe, cache string, goTool func() (string, error)) (*toolLocator, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	return &toolLocator{
		log:    hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug}),
		exe:    exe,
		cache:  cache,
		goTool: goTool,
		build:  buildTimeout,
	}, &logs
}

func noGo() (string, error) { return "", errors.New("no go command on PATH") }

// fakeFixpoint is a directory with an executable named fixpoint in it.
func fakeFixpoint(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "fixpoint")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

func TestLocatorPrefersProgramBesideBinary(t *testing.T) {
	exe := fakeFixpoint(t)
	beside := filepath.Join(filepath.Dir(exe), hooktool.ProgramName)
	if err := os.Symlink(toolBinary, beside); err != nil {
		t.Fatal(err)
	}
	l, logs := locator(t, exe, "", noGo)
	if got := l.locate(); got != beside {
		t.Errorf("locate = %s; want %s beside the binary (log: %s)", got, beside, logs)
	}
	if strings.Contains(logs.String(), "[WARN]") {
		t.Errorf("warned although fixpoint-hook is installed: %s", logs)
	}
}

func TestLocatorFallsBackWithOneWarning(t *testing.T) {
	exe := fakeFixpoint(t)
	// A stale fixpoint-hook beside the binary, speaking another protocol.
	stale := filepath.Join(filepath.Dir(exe), hooktool.ProgramName)
	if err := os.WriteFile(stale, []byte("#!/bin/sh\necho 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	l, logs := locator(t, exe, t.TempDir(), noGo)
	if got := l.locate(); got != exe {
		t.Errorf("locate = %s; want the fixpoint binary %s as the fallback", got, exe)
	}
	if !strings.Contains(logs.String(), "speaks hook tool protocol") {
		t.Errorf("the stale program was not named: %s", logs)
	}
	if n := strings.Count(logs.String(), "several times slower"); n != 1 {
		t.Errorf("%d fallback warnings; want 1: %s", n, logs)
	}
	if !strings.Contains(logs.String(), "no go command on PATH") {
		t.Errorf("the warning does not say why: %s", logs)
	}
}

func TestLocatorBuildsIntoCacheOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fixpoint-hook with the Go toolchain")
	}
	exe := fakeFixpoint(t)
	cache := t.TempDir()
	l, logs := locator(t, exe, cache, func() (string, error) { return goCommand(), nil })
	built := l.locate()
	if filepath.Base(built) != hooktool.ProgramName || !strings.HasPrefix(built, cache) {
		t.Fatalf("locate = %s; want fixpoint-hook built under %s (log: %s)", built, cache, logs)
	}
	fi, err := os.Stat(filepath.Dir(built))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("cache directory %s: %v, mode %v; want 0700", filepath.Dir(built), err, fi.Mode())
	}
	// The built program serves a classic hook like the installed one.
	got, _ := runToolHook(t, built)
	wantToolHookSettings(t, got)

	// A second agent finds it without a toolchain.
	l2, logs2 := locator(t, exe, cache, noGo)
	if again := l2.locate(); again != built {
		t.Errorf("second locate = %s; want the cached %s (log: %s)", again, built, logs2)
	}
}

func TestLocatorRefusesCacheOthersCanWrite(t *testing.T) {
	exe := fakeFixpoint(t)
	cache := t.TempDir()
	key, err := sourceKey(hookProgram)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, key)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(toolBinary, filepath.Join(dir, hooktool.ProgramName)); err != nil {
		t.Fatal(err)
	}
	l, logs := locator(t, exe, cache, noGo)
	if got := l.locate(); got != exe {
		t.Errorf("locate = %s; want the fallback %s, not a program from a world-writable cache", got, exe)
	}
	if !strings.Contains(logs.String(), "writable by others") {
		t.Errorf("the warning does not say why: %s", logs)
	}
}

func TestToolMainMatchesCmd(t *testing.T) {
	data, err := os.ReadFile("../../cmd/fixpoint-hook/main.go")
	if err != nil {
		t.Fatal(err)
	}
	cmd := strings.Replace(string(data), `"github.com/fixpoint/fixpoint/engine/legacy/hooktool"`, `"`+builtModule+`/hooktool"`, 1)
	if cmd != toolMainSource {
		t.Errorf("cmd/fixpoint-hook/main.go and the main the agent builds (toolMainSource) differ; keep them the same:\n%s\n---\n%s", cmd, toolMainSource)
	}
}

// TestToolProgramLinksOnlyStdlib keeps fixpoint-hook small and static: the
// standard library and package hooktool, and not net, whose cgo resolver
// would make it dynamically linked.
func TestToolProgramLinksOnlyStdlib(t *testing.T) {
	out, err := exec.Command(goCommand(), "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", "../../cmd/fixpoint-hook").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, std, _ := strings.Cut(line, " ")
		switch {
		case path == "net" || path == "os/user" || path == "runtime/cgo":
			t.Errorf("fixpoint-hook links %s, which makes it dynamically linked", path)
		case std == "true", path == "github.com/fixpoint/fixpoint/engine/legacy/hooktool", path == "github.com/fixpoint/fixpoint/cmd/fixpoint-hook":
		default:
			t.Errorf("fixpoint-hook links %s; it may link only the standard library and package hooktool", path)
		}
	}
}

func TestShellMainMatchesCmd(t *testing.T) {
	data, err := os.ReadFile("../../cmd/fixpoint-sh/main.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != shellMainSource {
		t.Errorf("cmd/fixpoint-sh/main.go and the main the agent builds (shellMainSource) differ; keep them the same:\n%s\n---\n%s", data, shellMainSource)
	}
}

// TestShellModuleMatchesRoot: the module the agent builds fixpoint-sh in
// requires what this module does, with the same checksums.
func TestShellModuleMatchesRoot(t *testing.T) {
	for file, lines := range map[string]string{"../../go.mod": shellGoMod, "../../go.sum": shellGoSum} {
		root, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		// A requirement is its module and version, whatever the comment.
		req := func(l string) string {
			l, _, _ = strings.Cut(l, "//")
			return strings.TrimPrefix(strings.TrimSpace(l), "require ")
		}
		have := map[string]bool{}
		for _, l := range strings.Split(string(root), "\n") {
			have[req(l)] = true
		}
		for _, l := range strings.Split(lines, "\n") {
			if l = req(l); strings.Contains(l, " v") && !have[l] {
				t.Errorf("%q is not in %s: update shellGoMod/shellGoSum", l, file)
			}
		}
	}
}

func TestShellLocatorFallsBackToTheSystemShellWithOneWarning(t *testing.T) {
	exe := fakeFixpoint(t)
	l, logs := locator(t, exe, t.TempDir(), noGo)
	if got := l.locateShell(); got != "" {
		t.Errorf("locateShell = %q; want none", got)
	}
	if n := strings.Count(logs.String(), "[WARN]"); n != 1 || !strings.Contains(logs.String(), "system shell") || !strings.Contains(logs.String(), "no go command on PATH") {
		t.Errorf("%d warnings; want 1 saying what runs the hooks, why and what to do: %s", n, logs)
	}
	beside := filepath.Join(filepath.Dir(exe), shellProgram.name)
	if err := os.Symlink(shellBinary, beside); err != nil {
		t.Fatal(err)
	}
	if got := l.locateShell(); got != beside {
		t.Errorf("locateShell = %q; want %s beside the binary", got, beside)
	}
}

func TestShellLocatorBuildsIntoCache(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fixpoint-sh with the Go toolchain")
	}
	exe := fakeFixpoint(t)
	cache := t.TempDir()
	l, logs := locator(t, exe, cache, func() (string, error) { return goCommand(), nil })
	built := l.locateShell()
	if filepath.Base(built) != shellProgram.name || !strings.HasPrefix(built, cache) {
		t.Fatalf("locateShell = %s; want fixpoint-sh built under %s (log: %s)", built, cache, logs)
	}
	// The built program runs a classic hook in the interpreter.
	got, _ := runToolHook(t, toolBinary, func(o *Options) { o.ShellBinary = built })
	wantToolHookSettings(t, got)
}
