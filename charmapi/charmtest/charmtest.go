package charmtest

import (
	"os"
	"testing"

	"github.com/fixpoint/fixpoint/engine/sim"
)

// The simulator is engine/sim; charmtest names its parts for charm tests
// and adds what needs a testing.T.

// Env is an environment to simulate (sim.Env).
type Env = sim.Env

// Service is one service of an Env (sim.Service).
type Service = sim.Service

// Hook is something that reconciles a unit (sim.Hook).
type Hook = sim.Hook

// ReconcileFunc is a Go reconcile hook, what charmapi.Main runs.
type ReconcileFunc = sim.ReconcileFunc

// SimOptions tune a simulation (sim.Options).
type SimOptions = sim.Options

// Report is what a simulation found (sim.Report).
type Report = sim.Report

// Schedule is one schedule of a simulation (sim.Schedule).
type Schedule = sim.Schedule

// Step, Cycle, Key, FixedPoint and Nondeterminism are parts of a Report.
type (
	Step           = sim.Step
	Cycle          = sim.Cycle
	Key            = sim.Key
	FixedPoint     = sim.FixedPoint
	Nondeterminism = sim.Nondeterminism
)

// Schedule styles.
const (
	StyleLockstep = sim.StyleLockstep
	StyleSerial   = sim.StyleSerial
	StyleRandom   = sim.StyleRandom
)

// NewEnv returns an empty environment.
func NewEnv(name string) *Env { return sim.NewEnv(name) }

// LoadEnv reads an environment file, as sim.LoadEnv.
func LoadEnv(paths ...string) (*Env, error) { return sim.LoadEnv(paths...) }

// ForCharms deploys units of every charm in dirs and relates them, as
// sim.ForCharms.
func ForCharms(units int, dirs ...string) (*Env, error) { return sim.ForCharms(units, dirs...) }

// Func makes a Go reconcile function a Hook (sim.Func).
func Func(fn ReconcileFunc) Hook { return sim.Func(fn) }

// Exec makes a hook executable a Hook (sim.Exec).
func Exec(path string) Hook { return sim.Exec(path) }

// Legacy makes an old-hook charm a Hook (sim.Legacy).
func Legacy(charmDir, toolsBinary string) Hook { return sim.Legacy(charmDir, toolsBinary) }

// CacheDir is where packed charms and Go hook builds are kept (sim.CacheDir).
func CacheDir() string { return sim.CacheDir() }

// Converges simulates env and fails the test unless every schedule
// reaches the same fixed point and every hook is a function of its
// universe; the report is logged either way.
func Converges(t testing.TB, env *Env, opts SimOptions) *Report {
	t.Helper()
	rep, err := env.Simulate(t.Context(), opts)
	if err != nil {
		t.Fatalf("simulate %s: %v", env.Name(), err)
	}
	if !rep.OK() {
		t.Fatalf("%s", rep)
	}
	t.Logf("%s", rep)
	return rep
}

// Charm packs the charm directory dir (building its Go sources, as
// `fixpoint charm pack` does), unpacks it into a temporary directory that
// is removed when the test ends, and returns its hook. Old-hook charms
// need the fixpoint binary for their hook tools: set $FIXPOINT_BINARY.
func Charm(t testing.TB, dir string) Hook {
	t.Helper()
	h, _, err := sim.OpenCharm(dir, t.TempDir(), os.Getenv("FIXPOINT_BINARY"))
	if err != nil {
		t.Fatalf("charm %s: %v", dir, err)
	}
	return h
}
