// Package release builds a past release of fixpoint from the repository's
// git history, offline, for the tests and benches that run a cluster of
// mixed builds (a rolling upgrade, a server restarted on the other build).
package release

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Previous is the release before this build, v0.3.0: the one a cluster
// upgrades from (docs/operating.md, "Upgrading"). It is named by its
// commit, which every clone of main holds, where the tag may be missing.
const Previous = "19c0248613459c83e738bfd6f2628c94b7c081f3"

// ErrNoHistory means the repository's history does not hold the release
// (a shallow clone, or no git): callers skip, saying so.
var ErrNoHistory = errors.New("the git history does not hold it")

// Build extracts rev of the repository at repo into dir and builds the
// given commands there (./cmd/fixpoint, ...) into dir/bin, offline, with
// the module cache, as this build is built (so the build cache serves
// both). It returns dir/bin.
func Build(ctx context.Context, repo, rev, dir string, cmds ...string) (string, error) {
	git, err := exec.LookPath("git")
	if err != nil {
		return "", fmt.Errorf("build %s: no git: %w", rev, ErrNoHistory)
	}
	if err := exec.CommandContext(ctx, git, "-C", repo, "rev-parse", "--verify", "--quiet", rev+"^{commit}").Run(); err != nil {
		return "", fmt.Errorf("build %s (git fetch --tags --unshallow to get it): %w", rev, ErrNoHistory)
	}
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	extract := exec.CommandContext(ctx, "sh", "-c", `"$0" -C "$1" archive --format=tar "$2" | tar -x -C "$3"`, git, repo, rev, src)
	if out, err := extract.CombinedOutput(); err != nil {
		return "", fmt.Errorf("git archive %s: %w: %s", rev, err, out)
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			return "", fmt.Errorf("build %s: no go toolchain: %w", rev, err)
		}
	}
	bin := filepath.Join(dir, "bin")
	build := exec.CommandContext(ctx, goBin, append([]string{"build", "-o", bin + "/"}, cmds...)...)
	build.Dir = src
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "GOPROXY=off", "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s offline: %w: %s", rev, err, out)
	}
	return bin, nil
}
