package legacy

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/engine/legacy/hooktool"
)

// hooktoolSource is the tools' client, compiled into every fixpoint binary
// so that an agent started with `go run` (nothing installed beside it) can
// build the matching fixpoint-hook with the local Go toolchain.
//
//go:embed hooktool/*.go
var hooktoolSource embed.FS

// toolMainSource is cmd/fixpoint-hook/main.go as it reads in the module
// the agent builds (TestToolMainMatchesCmd keeps the two the same).
const toolMainSource = `// Command fixpoint-hook is the program behind the Juju hook tools
// (relation-get, relation-set, config-get, ...) that old charms' hooks
// call: the agent links it under each tool's name on the hooks' PATH. It
// links only the standard library and the tools' protocol, so a call costs
// little more than spawning /bin/true (bench/oldhooks measures it).
//
// A call lives a few milliseconds: the runtime need not size GOMAXPROCS
// from the cgroup (reading /proc/self/mountinfo) or keep re-checking it.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
package main

import "` + builtModule + `/hooktool"

func main() {
	hooktool.Exec()
}
`

// builtModule is the module path of the tool the agent builds; it needs
// nothing but the standard library, so no go.sum and no network.
const builtModule = "fixpoint-hook"

// buildTimeout bounds building fixpoint-hook; a cold Go build cache on a
// loaded machine takes a minute or more.
const buildTimeout = 5 * time.Minute

// ToolsProgram returns the executable that the hook-tool links of every
// Run in this process point at, found once per process:
//
//  1. fixpoint-hook beside the running executable (`go install ./cmd/...`
//     puts it there), if it speaks this protocol;
//  2. fixpoint-hook in the user's cache, built earlier from the same source;
//  3. fixpoint-hook built now into that cache with the Go toolchain on PATH
//     (what `go run ./cmd/fixpoint up` gets);
//  4. the running fixpoint binary itself, which is every tool too but
//     starts several times slower; the one warning says why and what to do.
func ToolsProgram(log hclog.Logger) (string, error) {
	toolsOnce.Do(func() {
		l := toolLocator{log: log, goTool: lookGo, build: buildTimeout}
		l.exe, toolsErr = os.Executable()
		if toolsErr != nil {
			toolsErr = fmt.Errorf("find the fixpoint binary for the hook tools: %w", toolsErr)
			return
		}
		if d, err := os.UserCacheDir(); err == nil {
			l.cache = filepath.Join(d, "fixpoint", "hook-tool")
		}
		toolsPath = l.locate()
	})
	return toolsPath, toolsErr
}

var (
	toolsOnce sync.Once
	toolsPath string
	toolsErr  error
)

// program is one of the programs the agent runs for old hooks and can
// build from the source compiled into it.
type program struct {
	name string // as installed: fixpoint-hook, fixpoint-sh
	// sources are the files of the module to build, by slash path.
	sources func() (map[string][]byte, error)
	pkg     string // what to build in that module
}

// hookProgram is fixpoint-hook, the hook tools' program.
var hookProgram = program{name: hooktool.ProgramName, sources: toolSources, pkg: "."}

// toolLocator finds or builds fixpoint-hook; its fields are what the
// tests replace.
type toolLocator struct {
	log   hclog.Logger
	exe   string // the running fixpoint binary, the fallback
	cache string // where built tools are kept; "" when there is none
	// goTool finds the go command.
	goTool func() (string, error)
	build  time.Duration
}

func lookGo() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	// A binary built by `go run` knows the GOROOT it was built with.
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if runtime.GOROOT() != "" {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", errors.New("no go command on PATH")
}

// find returns prog beside the running binary if it speaks this
// protocol, else from the cache, built there if need be (cached).
func (l *toolLocator) find(prog program) (string, error) {
	beside := filepath.Join(filepath.Dir(l.exe), prog.name)
	if _, err := os.Stat(beside); err == nil {
		if err := checkProtocol(beside); err == nil {
			l.log.Debug("old hooks: using "+prog.name+" beside the binary", "path", beside)
			return beside, nil
		} else {
			l.log.Warn("old hooks: ignoring "+prog.name+" beside the binary", "path", beside, "error", err)
		}
	}
	return l.cached(prog)
}

func (l *toolLocator) locate() string {
	path, err := l.find(hookProgram)
	if err == nil {
		return path
	}
	l.log.Warn("hook tools run as the fixpoint binary itself, several times slower per call than fixpoint-hook: "+
		"install it beside the binary (go install github.com/fixpoint/fixpoint/cmd/...) or put a Go toolchain on PATH",
		"binary", l.exe, "reason", err)
	return l.exe
}

// cached returns prog from the cache, building it there first if it is
// not.
func (l *toolLocator) cached(prog program) (string, error) {
	if l.cache == "" {
		return "", fmt.Errorf("no user cache directory to build %s in ($HOME and $XDG_CACHE_HOME unset)", prog.name)
	}
	key, err := sourceKey(prog)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(l.cache, key)
	path := filepath.Join(dir, prog.name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("hook tool cache: %w", err)
	}
	// The agent runs what it finds here in every old hook: only a
	// directory and a file no one else can write to are trusted.
	if err := privateToUs(dir); err != nil {
		return "", err
	}
	if _, err := os.Lstat(path); err == nil {
		if err := privateToUs(path); err != nil {
			return "", err
		}
		if err := checkProtocol(path); err == nil {
			return path, nil
		}
	}
	goTool, err := l.goTool()
	if err != nil {
		return "", fmt.Errorf("%s is not beside %s nor built in %s, and it cannot be built: %w", prog.name, l.exe, dir, err)
	}
	start := time.Now()
	if err := buildProgram(prog, goTool, dir, l.build); err != nil {
		return "", err
	}
	if err := checkProtocol(path); err != nil {
		return "", fmt.Errorf("built %s does not run: %w", prog.name, err)
	}
	l.log.Info("old hooks: built "+prog.name+" with the local Go toolchain", "path", path, "took", time.Since(start).Round(time.Millisecond))
	return path, nil
}

// toolSources are the files of the module buildTool writes: the client
// package and the command, by path.
func toolSources() (map[string][]byte, error) {
	files := map[string][]byte{
		"go.mod":  []byte("module " + builtModule + "\n\ngo 1.22\n"),
		"main.go": []byte(toolMainSource),
	}
	err := fs.WalkDir(hooktoolSource, "hooktool", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, "_test.go") {
			return err
		}
		data, err := hooktoolSource.ReadFile(p)
		files[p] = data
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("hook tool source: %w", err)
	}
	return files, nil
}

// sourceKey names a build by what goes into it: the source, the platform.
func sourceKey(prog program) (string, error) {
	files, err := prog.sources()
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	fmt.Fprintf(h, "%s/%s\n", runtime.GOOS, runtime.GOARCH)
	for _, n := range names {
		fmt.Fprintf(h, "%s %d\n", n, len(files[n]))
		h.Write(files[n])
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

// buildProgram builds prog into dir: a static binary (no cgo), for this
// machine, with this toolchain (never a downloaded one), then moves it
// into place in one rename so that agents building at once never run a
// half-written file.
func buildProgram(prog program, goTool, dir string, timeout time.Duration) error {
	files, err := prog.sources()
	if err != nil {
		return err
	}
	src, err := os.MkdirTemp("", prog.name+"-src-")
	if err != nil {
		return fmt.Errorf("build %s: %w", prog.name, err)
	}
	defer os.RemoveAll(src)
	for name, data := range files {
		p := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return fmt.Errorf("build %s: %w", prog.name, err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return fmt.Errorf("build %s: %w", prog.name, err)
		}
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".%s-%d", prog.name, os.Getpid()))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "build", "-trimpath", "-ldflags=-s -w", "-o", tmp, prog.pkg)
	cmd.Dir = src
	cmd.Env = buildEnv(os.Environ())
	out, err := cmd.CombinedOutput()
	if err != nil {
		os.Remove(tmp)
		if ctx.Err() != nil {
			err = fmt.Errorf("took longer than %s", timeout)
		}
		return fmt.Errorf("build %s with %s: %v: %s", prog.name, goTool, err, strings.TrimSpace(string(out)))
	}
	if err := os.Rename(tmp, filepath.Join(dir, prog.name)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("build %s: %w", prog.name, err)
	}
	return nil
}

// buildEnv is the agent's environment minus what would make the build
// cross-compile, use cgo, fetch a toolchain or read a workspace.
func buildEnv(env []string) []string {
	out := make([]string, 0, len(env)+5)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOOS", "GOARCH", "CGO_ENABLED", "GOTOOLCHAIN", "GOWORK", "GOFLAGS", "GO111MODULE":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "CGO_ENABLED=0", "GOTOOLCHAIN=local", "GOWORK=off", "GOFLAGS=", "GO111MODULE=on")
}

// checkProtocol runs path --protocol: it must be a fixpoint-hook or
// fixpoint-sh speaking this version of the hook tools' protocol.
func checkProtocol(path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--protocol").Output()
	if err != nil {
		return fmt.Errorf("%s --protocol: %w", path, err)
	}
	if got := strings.TrimSpace(string(out)); got != strconv.Itoa(hooktool.ProtocolVersion) {
		return fmt.Errorf("%s speaks hook tool protocol %q, this fixpoint %d", path, got, hooktool.ProtocolVersion)
	}
	return nil
}

// privateToUs refuses a path that is a symlink, not ours, or writable by
// group or others.
func privateToUs(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("hook tool cache: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("hook tool cache: %s is a symlink; remove it", path)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("hook tool cache: %s is writable by others (%s); remove it or chmod go-w", path, fi.Mode().Perm())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("hook tool cache: %s belongs to uid %d, not to this agent's %d; remove it", path, st.Uid, os.Getuid())
	}
	return nil
}
