package charm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// goBuilds counts go build runs, so tests can tell a cache hit.
var goBuilds atomic.Int64

// buildEnv is the environment of every charm build. CGO is off so the
// hook is a static binary that runs on any machine of the same OS and
// architecture, whatever its C library.
func buildEnv() []string { return append(os.Environ(), "CGO_ENABLED=0") }

// goEnv is what the build key needs from `go env`, read once per process.
var goEnv = sync.OnceValues(func() (map[string]string, error) {
	if _, err := exec.LookPath("go"); err != nil {
		return nil, errNoGo
	}
	cmd := exec.Command("go", "env", "-json", "GOVERSION", "GOOS", "GOARCH", "GOMODCACHE", "GOFLAGS")
	cmd.Env = buildEnv()
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	env := map[string]string{}
	if err := json.Unmarshal(out, &env); err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	return env, nil
})

// buildHook builds the Go main package in src into a reconcile binary and
// returns its path. Builds are cached in cacheDir/builds under a key over
// everything that decides the output, so an unchanged charm is not
// rebuilt; go build with -trimpath is reproducible, so a rebuild gives the
// same bytes anyway.
func buildHook(src, cacheDir string) (string, error) {
	key, err := buildKey(src)
	if err != nil {
		return "", err
	}
	out := filepath.Join(cacheDir, "builds", key, "reconcile")
	if fi, err := os.Stat(out); err == nil && fi.Mode().IsRegular() {
		return out, nil
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", fmt.Errorf("charm build cache: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), ".build-*")
	if err != nil {
		return "", fmt.Errorf("charm build cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	goBuilds.Add(1)
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-o", filepath.Join(tmp, "reconcile"), ".")
	// Run in src so that the go.mod enclosing the charm decides the
	// module and its dependencies.
	cmd.Dir = src
	cmd.Env = buildEnv()
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building %s failed (go build -trimpath in %s): %v\n%s", filepath.Join(filepath.Base(filepath.Dir(src)), "src"), src, err, strings.TrimSpace(output.String()))
	}
	// Rename is atomic: a concurrent Pack either finds the finished binary
	// or builds its own identical one.
	if err := os.Rename(filepath.Join(tmp, "reconcile"), out); err != nil {
		return "", fmt.Errorf("charm build cache: %w", err)
	}
	return out, nil
}

// buildKey hashes everything that decides what go build produces: the Go
// version, target and flags; the source files of src and of every package
// it imports from outside the module cache (other packages of the charm's
// module, such as charmapi, or local replacements); and go.mod and go.sum,
// which pin everything in the module cache.
func buildKey(src string) (string, error) {
	env, err := goEnv()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, k := range []string{"GOVERSION", "GOOS", "GOARCH", "GOFLAGS"} {
		fmt.Fprintf(h, "%s=%s\n", k, env[k])
	}
	fmt.Fprintf(h, "CGO_ENABLED=0 -trimpath -buildvcs=false\n")
	mod := findUp(src, "go.mod")
	if mod != "" {
		for _, f := range []string{mod, filepath.Join(filepath.Dir(mod), "go.sum")} {
			if err := hashFile(h, f, "module"); err != nil && !errors.Is(err, os.ErrNotExist) {
				return "", err
			}
		}
	}
	files, err := localSources(src, env["GOMODCACHE"])
	if err != nil {
		return "", err
	}
	for _, f := range files {
		// Label files relative to the module, so that the same module
		// checked out elsewhere finds the same builds.
		label := f
		if r, err := filepath.Rel(filepath.Dir(mod), f); mod != "" && err == nil {
			label = filepath.ToSlash(r)
		}
		if err := hashFile(h, f, label); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// localSources lists, sorted, the source files of src's package and of
// every non-standard package it depends on that lives outside the module
// cache, as `go list -deps` reports them.
func localSources(src, modCache string) ([]string, error) {
	cmd := exec.Command("go", "list", "-deps", "-json=Dir,ImportPath,Standard,GoFiles,CgoFiles,CFiles,HFiles,SFiles,SysoFiles,EmbedFiles", ".")
	cmd.Dir = src
	cmd.Env = buildEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("reading the Go package in %s failed (go list): %v\n%s", src, err, strings.TrimSpace(stderr.String()))
	}
	var files []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			Dir                                                  string
			Standard                                             bool
			GoFiles, CgoFiles, CFiles, HFiles, SFiles, SysoFiles []string
			EmbedFiles                                           []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		if p.Standard || modCache != "" && strings.HasPrefix(p.Dir, modCache+string(filepath.Separator)) {
			continue
		}
		for _, set := range [][]string{p.GoFiles, p.CgoFiles, p.CFiles, p.HFiles, p.SFiles, p.SysoFiles, p.EmbedFiles} {
			for _, f := range set {
				files = append(files, filepath.Join(p.Dir, f))
			}
		}
	}
	sort.Strings(files)
	return files, nil
}

// hashFile adds a file's label, length and bytes to h; the label and
// length keep two different file sets from hashing alike.
func hashFile(h io.Writer, name, label string) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	fmt.Fprintf(h, "%s %d\n", label, len(data))
	_, err = h.Write(data)
	return err
}

// findUp returns the nearest file called name at or above dir, or "".
func findUp(dir, name string) string {
	for d := dir; ; {
		if fi, err := os.Stat(filepath.Join(d, name)); err == nil && !fi.IsDir() {
			return filepath.Join(d, name)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}
