package charmtest

import (
	"testing"

	"github.com/fixpoint/fixpoint/engine/sim"
)

// The simulator is engine/sim; charmtest names its parts for charm tests
// and adds what needs a testing.T. What reads charm directories and
// environment files is in package charmdir.

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

// NewEnv returns an empty environment whose charms are given by their
// metadata (Env.DeployMeta); charmdir.NewEnv's also deploys charm
// directories.
func NewEnv(name string) *Env { return sim.NewEnv(name) }

// Func makes a Go reconcile function a Hook (sim.Func).
func Func(fn ReconcileFunc) Hook { return sim.Func(fn) }

// Exec makes a hook executable a Hook (sim.Exec).
func Exec(path string) Hook { return sim.Exec(path) }

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
