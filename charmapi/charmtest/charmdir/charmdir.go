// Package charmdir is the part of the charm author's kit (charmtest) that
// reads charm directories and environment files: a charm's own hook,
// packed as fixpoint packs it (Charm); an old-hook charm's hooks (Legacy);
// and simulations that deploy charm directories (NewEnv, whose Env.Deploy
// reads them, LoadEnv, ForCharms). Reading a charm's metadata takes the
// CUE evaluator, so a test that imports this package builds about 420
// packages where charmtest alone builds fewer than 150.
package charmdir

import (
	"os"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi/charmtest"
	"github.com/fixpoint/fixpoint/engine/sim/simdir"
)

// NewEnv returns an empty environment that deploys charm directories
// (Env.Deploy) as well as charms given by their metadata.
func NewEnv(name string) *charmtest.Env { return simdir.NewEnv(name) }

// LoadEnv reads an environment file, as simdir.LoadEnv.
func LoadEnv(paths ...string) (*charmtest.Env, error) { return simdir.LoadEnv(paths...) }

// ForCharms deploys units of every charm in dirs and relates them, as
// simdir.ForCharms.
func ForCharms(units int, dirs ...string) (*charmtest.Env, error) {
	return simdir.ForCharms(units, dirs...)
}

// Legacy makes an old-hook charm a Hook (simdir.Legacy).
func Legacy(charmDir, toolsBinary string) charmtest.Hook { return simdir.Legacy(charmDir, toolsBinary) }

// CacheDir is where packed charms and Go hook builds are kept
// (simdir.CacheDir).
func CacheDir() string { return simdir.CacheDir() }

// Charm packs the charm directory dir (building its Go sources, as
// `fixpoint charm pack` does), unpacks it into a temporary directory that
// is removed when the test ends, and returns its hook. Old-hook charms
// need the fixpoint binary for their hook tools: set $FIXPOINT_BINARY.
func Charm(t testing.TB, dir string) charmtest.Hook {
	t.Helper()
	h, _, err := simdir.Open(dir, t.TempDir(), os.Getenv("FIXPOINT_BINARY"))
	if err != nil {
		t.Fatalf("charm %s: %v", dir, err)
	}
	return h
}
