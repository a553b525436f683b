package legacy

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/engine/legacy/shebang"
)

// Hook shells: what runs old charms' POSIX sh hooks (--hook-shell).
const (
	// HookShellBuiltin runs them in fixpoint-sh, whose hook tools are
	// builtins, when it is at hand; the default.
	HookShellBuiltin = "builtin"
	// HookShellSystem runs every hook as its own executable, as Juju does.
	HookShellSystem = "system"
)

// CheckHookShell refuses a hook shell that is neither HookShellBuiltin
// nor HookShellSystem ("" is the default, builtin).
func CheckHookShell(s string) error {
	switch s {
	case "", HookShellBuiltin, HookShellSystem:
		return nil
	}
	return fmt.Errorf("hook shell %q: want %s or %s", s, HookShellBuiltin, HookShellSystem)
}

// hookshSource is fixpoint-sh's package, compiled into every fixpoint
// binary so that an agent started with `go run` can build fixpoint-sh
// with the local Go toolchain, as it builds fixpoint-hook.
//
//go:embed hooksh/*.go shebang/*.go
var hookshSource embed.FS

// shellMainSource is cmd/fixpoint-sh/main.go (TestShellMainMatchesCmd
// keeps the two the same).
const shellMainSource = `// Command fixpoint-sh runs old charms' POSIX sh hooks in an embedded
// interpreter whose Juju hook tools are builtins (engine/legacy/hooksh):
// the agent starts it, contained as any hook, as
// ` + "`fixpoint-sh --tools DIR -- HOOK`" + `. A hook it cannot run faithfully it
// execs for the system shell before running any of it.
//
// Like fixpoint-hook it lives as long as one hook: the runtime need not
// size GOMAXPROCS from the cgroup or keep re-checking it.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
package main

import (
	"os"

	"github.com/fixpoint/fixpoint/engine/legacy/hooksh"
)

func main() {
	os.Exit(hooksh.Main(os.Args))
}
`

// shellGoMod and shellGoSum make the module fixpoint-sh is built in: this
// module's path, so its packages keep their import paths, requiring the
// interpreter at this module's versions (TestShellModuleMatchesRoot).
const (
	shellGoMod = `module github.com/fixpoint/fixpoint

go 1.26.0

require mvdan.cc/sh/v3 v3.14.1

require (
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/term v0.45.0 // indirect
)
`
	shellGoSum = `golang.org/x/sys v0.47.0 h1:o7XGOvZQCADBQQ4Y7VNq2dRWQR7JmOUW8Kxx4ZsNgWs=
golang.org/x/sys v0.47.0/go.mod h1:4GL1E5IUh+htKOUEOaiffhrAeqysfVGipDYzABqnCmw=
golang.org/x/term v0.45.0 h1:NwWyBmoJCbfTHpxrWoZ9C6/VxOf7ic219I8xZZFdrf0=
golang.org/x/term v0.45.0/go.mod h1:9aqxs0blBcrm/n0L9QW0aRVD+ktan8ssZromtqJC43w=
mvdan.cc/sh/v3 v3.14.1 h1:bXkhQWNHCs0KZEChF8hYS6FC+T2N9mUZLbQv9blditI=
mvdan.cc/sh/v3 v3.14.1/go.mod h1:syYCoFET8w9tvevxiXUtY8/ICrU+l26jHmhJDra3Vwo=
`
)

// shellProgram is fixpoint-sh.
var shellProgram = program{name: shebang.ProgramName, sources: shellSources, pkg: "./cmd/fixpoint-sh"}

// shellSources are the files of the module fixpoint-sh is built in.
func shellSources() (map[string][]byte, error) {
	files := map[string][]byte{
		"go.mod":                  []byte(shellGoMod),
		"go.sum":                  []byte(shellGoSum),
		"cmd/fixpoint-sh/main.go": []byte(shellMainSource),
	}
	for _, src := range []struct {
		fs  embed.FS
		dir string
	}{{hooktoolSource, "hooktool"}, {hookshSource, "hooksh"}, {hookshSource, "shebang"}} {
		err := fs.WalkDir(src.fs, src.dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(p, "_test.go") {
				return err
			}
			data, err := src.fs.ReadFile(p)
			files["engine/legacy/"+p] = data
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("%s source: %w", shebang.ProgramName, err)
		}
	}
	return files, nil
}

// ShellProgram returns fixpoint-sh, found once per process by
// ToolsProgram's rules (beside the executable, in the user's cache, built
// there with the Go toolchain on PATH), or "" when there is none: POSIX
// sh hooks then run as their own executables, as under --hook-shell
// system, and one warning says what to do.
func ShellProgram(log hclog.Logger) string {
	shellOnce.Do(func() {
		l := toolLocator{log: log, goTool: lookGo, build: buildTimeout}
		exe, err := os.Executable()
		if err != nil {
			log.Warn("old hooks: POSIX sh hooks run under the system shell: cannot find the fixpoint binary to look beside", "error", err)
			return
		}
		l.exe = exe
		if d, err := os.UserCacheDir(); err == nil {
			l.cache = filepath.Join(d, "fixpoint", "hook-tool")
		}
		shellPath = l.locateShell()
	})
	return shellPath
}

var (
	shellOnce sync.Once
	shellPath string
)

// locateShell is locate for fixpoint-sh, whose fallback is no program.
func (l *toolLocator) locateShell() string {
	path, err := l.find(shellProgram)
	if err == nil {
		return path
	}
	l.log.Warn("old hooks: POSIX sh hooks run under the system shell, each hook tool call a process: "+
		"install fixpoint-sh beside the binary (go install github.com/fixpoint/fixpoint/cmd/...) or put a Go toolchain on PATH",
		"binary", l.exe, "reason", err)
	return ""
}
