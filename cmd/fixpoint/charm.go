package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/charm"
	"github.com/fixpoint/fixpoint/engine/sim"
	"github.com/fixpoint/fixpoint/engine/sim/simdir"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/schemas"
)

// fixpointModule is the module charms import charmapi from.
const fixpointModule = "github.com/fixpoint/fixpoint"

// exitDiffers is `charm test`'s exit code when every schedule converges
// but not all to the same fixed point.
const exitDiffers = 5

// exitUnmet is `charm test`'s exit code when every schedule converges to
// one fixed point that misses the environment's expect:: converged, but
// not as wanted, as --fail-on-blocked's 6 elsewhere.
const exitUnmet = exitBlocked

func newCharmCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "charm",
		Short: "Write, pack and test charms",
		Long: `Tools for charm authors: start a charm with a Go reconcile hook (init), pack
it as fixpoint deploys it (pack), and check that it reaches the same fixed
point under every schedule, without a cluster (test).

See docs/charm-authors.md.`,
	}
	cmd.AddCommand(newCharmInitCmd(), newCharmPackCmd(), newCharmTestCmd())
	return cmd
}

// charmFiles are the template's files, by path inside the charm.
var charmFiles = []struct{ path, text string }{
	{"charm.cue", `// Metadata of the {{.Name}} charm: what it relates over and its options.
name:    "{{.Name}}"
summary: "{{.Name}}: say in one line what it runs"

// Clients relate to website; every unit publishes where to reach it.
provides: website: interface: "http"

// Units of {{.Name}} see each other over peers (related automatically).
peers: peers: interface: "{{.Name}}-peers"

config: options: {
	port: {type: "int", default: 8080, description: "port the service listens on"}
	greeting: {type: "string", default: "hello", description: "what the service says"}
}
`},
	{"src/main.go", `// Command reconcile is the {{.Name}} charm's reconcile hook. fixpoint builds
// it from this directory when it packs the charm.
package main

import "{{.Module}}/charmapi"

func main() { charmapi.Main(reconcile) }
`},
	{"src/reconcile.go", `package main

import "{{.Module}}/charmapi"

// reconcile computes the whole output of one {{.Name}} unit from its
// universe: everything the unit may see (config, relations, the settings
// of related units). fixpoint runs it whenever that universe changes and
// writes what it returns, which may change other units' universes; the
// environment settles when nothing changes any more.
//
// To get there, keep it a function of the universe: the same universe must
// give the same result. No timestamps, random values or counters in what
// it writes; sort whatever it lists (charmapi.JoinUnits); write every key
// each time (a relation's settings are replaced whole).
func reconcile(u *charmapi.Universe) (*charmapi.Result, error) {
	opts := u.Options()
	port := opts.Int("port", 8080)
	greeting := opts.String("greeting", "hello")
	if err := opts.Err(); err != nil {
		return nil, err
	}
	res := charmapi.NewResult()

	// Tell every related client where to reach this unit.
	for _, rel := range u.RelationsNamed("website") {
		res.Local(rel.Ident).Set("hostname", u.Address).Setf("port", "%d", port)
	}

	// Tell the peers this unit's address; the leader publishes who is in
	// the service, sorted, in the service's bag.
	peers := u.Relation("peers")
	if peers != nil {
		res.Local(peers.Ident).Set("address", u.Address)
		if u.Leader {
			res.App(peers.Ident).Set("members", charmapi.JoinUnits(append(peers.Members(), u.Unit)))
		}
	}
	units := len(peers.Members()) + 1 // accessors are nil-safe
	return res.Activef("%s from %d unit(s) on port %d", greeting, units, port), nil
}
`},
	{"src/reconcile_test.go", `package main

import (
	"testing"

	"{{.Module}}/charmapi/charmtest"
	"{{.Module}}/charmapi/charmtest/charmdir"
)

// TestPublishes runs reconcile on a universe built in a few lines and
// checks what it writes. charmtest.Run runs it twice: a hook that returns
// something else for the same universe fails the test.
func TestPublishes(t *testing.T) {
	b := charmtest.NewUniverse("{{.Name}}/0").Leader().Address("10.0.0.1").Config("port", 9000)
	b.Provides("website", "proxy").Units("proxy/0")
	b.Peer("peers").Unit("{{.Name}}/1", "address", "10.0.0.2")
	charmtest.Run(t, charmtest.Func(reconcile), b.Universe()).
		ExpectLocal("website:0", map[string]string{"hostname": "10.0.0.1", "port": "9000"}).
		ExpectLocal("peers:1", map[string]string{"address": "10.0.0.1"}).
		ExpectApp("peers:1", map[string]string{"members": "{{.Name}}/0 {{.Name}}/1"}).
		ExpectStatus("active", "hello from 2 unit(s) on port 9000")
}

// TestConverges deploys three units in memory and checks that every
// schedule (which units run when, how their results are batched) reaches
// the same fixed point. ` + "`fixpoint charm test ..`" + ` does the same with the
// packed charm.
func TestConverges(t *testing.T) {
	env := charmdir.NewEnv("{{.Name}}")
	env.Deploy("{{.Name}}", "..").Units(3)
	env.Hook("{{.Name}}", charmtest.Func(reconcile))
	rep := charmtest.Converges(t, env, charmtest.SimOptions{Schedules: 20})
	if got := rep.FixedPoints[0].Settings["{{.Name}} relations.peers:0.app.members"]; got != "{{.Name}}/0 {{.Name}}/1 {{.Name}}/2" {
		t.Errorf("members = %q", got)
	}
}
`},
}

func newCharmPackCmd() *cobra.Command {
	var out string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "pack DIR",
		Short: "Build a charm's Go hook, check its metadata and pack it",
		Long: `pack does what deploying does to a charm: it validates its metadata (charm.cue,
or metadata.yaml and config.yaml), builds src/ into hooks/reconcile with
"go build" when there is a src/, and writes the deterministic archive an
agent unpacks. It prints the archive's content hash (sha256), by which the
control plane knows the charm: packing unchanged sources again gives the
same hash. Archives and builds are cached in the user's cache directory.`,
		Example: `  fixpoint charm pack ./myapp
  fixpoint charm pack ./myapp -o myapp.charm
  HASH=$(fixpoint charm pack -q ./myapp)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			p, err := charm.Pack(dir, simdir.CacheDir())
			if err != nil {
				return exitf(exitFailed, "%s", packError(err))
			}
			if err := p.Meta.Validate(); err != nil {
				return exitf(exitFailed, "%v", err)
			}
			archive := p.Path
			if out != "" {
				data, err := os.ReadFile(p.Path)
				if err == nil {
					err = os.WriteFile(out, data, 0o644)
				}
				if err != nil {
					return exitf(exitFailed, "write %s: %v", out, err)
				}
				archive = out
			}
			w := cmd.OutOrStdout()
			if quiet {
				fmt.Fprintln(w, p.Hash)
				return nil
			}
			hooks := "hooks/reconcile"
			switch {
			case p.Legacy:
				names := hookNames(dir)
				if len(names) > 4 {
					names = append(names[:4], "...")
				}
				hooks = fmt.Sprintf("%d old hooks, run through the adapter (%s)", len(hookNames(dir)), strings.Join(names, ", "))
			case isDir(filepath.Join(dir, charm.SrcDir)):
				hooks = "hooks/reconcile, built from src/ with go build"
			}
			fmt.Fprintf(w, "charm      %s, from %s\n", p.Meta.Name, displayPath(mustAbs(dir)))
			fmt.Fprintf(w, "hooks      %s\n", hooks)
			fmt.Fprintf(w, "endpoints  %s\n", endpointSummary(&p.Meta))
			if len(p.Meta.Options) > 0 {
				fmt.Fprintf(w, "options    %s\n", optionSummary(&p.Meta))
			}
			fmt.Fprintf(w, "archive    %s (%d bytes)\n", archive, p.Size)
			fmt.Fprintf(w, "hash       %s\n", p.Hash)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "output", "", "also copy the archive to this file")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the content hash")
	return cmd
}

// packError prints schema problems one per line, at file:line:col.
func packError(err error) string {
	var se *schemas.Error
	if errors.As(err, &se) {
		var lines []string
		for _, p := range se.Problems {
			lines = append(lines, p.String())
		}
		return strings.Join(lines, "\n")
	}
	return err.Error()
}

func hookNames(dir string) []string {
	entries, _ := os.ReadDir(filepath.Join(dir, charm.HooksDir))
	var names []string
	for _, e := range entries {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names
}

func endpointSummary(m *model.CharmMeta) string {
	var parts []string
	for _, e := range m.Endpoints() {
		if e.Name == model.JujuInfo {
			continue
		}
		s := fmt.Sprintf("%s %s (%s", e.Role, e.Name, e.Interface)
		if e.Scope == model.Container {
			s += ", container"
		}
		parts = append(parts, s+")")
	}
	if len(parts) == 0 {
		return "none besides juju-info"
	}
	return strings.Join(parts, ", ")
}

func optionSummary(m *model.CharmMeta) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(m.Options)) {
		o := m.Options[name]
		s := name + " (" + o.Type
		if o.Default != nil {
			s += fmt.Sprintf(", default %v", o.Default)
		}
		parts = append(parts, s+")")
	}
	return strings.Join(parts, ", ")
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func mustAbs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func newCharmTestCmd() *cobra.Command {
	var (
		files       []string
		units       int
		schedules   int
		seed        uint64
		schedule    int
		machines    int
		trace       bool
		hookTimeout time.Duration
		noTimer     bool
		actions     []string
		resources   []string
	)
	cmd := &cobra.Command{
		Use:   "test DIR... | test -f ENV.cue [DIR...]",
		Short: "Check that charms reach the same fixed point under every schedule",
		Long: `test packs the charms (building their Go hooks) and runs an environment of
them in memory: the control plane's own state and rules, without Raft or an
agent, with every hook run as a real process on the universe the engine
would give it. It does so under many schedules — which stale units run in a
round, in what order, how their results are batched, whose results arrive
late — and reports whether they all reach the same fixed point, how many
reconciles that took, and, when they do not converge, the cycle they go
round and the keys that keep changing, with who writes them. A hook that
returns two different results for the same universe is reported too.

Without -f the environment is made from the charms named: one service per
charm with --units units, related wherever one provides an interface
another requires. With -f it is the environment file (the DIRs, if any,
must be charms it deploys).

It prints each unit's workload status at the fixed point. An environment
file may declare what it must be, per service, in expect: (e.g. expect: web:
{status: "active"}, with message: to require the message too); up and apply
ignore it.

Exit codes: 0 every schedule converged to one fixed point that meets the
expect:; 1 bad input; 3 some schedule did not converge, or a hook is not a
function of its universe; 5 schedules converged to different fixed points;
6 they converged to one that misses the expect:, or an --action failed.

When a schedule has nothing left to run, the update-status timer fires once
(as it would every --update-status-interval under up): the settled units of
old-hook and ops charms run update-status, and the schedule goes on if that
changed anything. --no-update-status leaves it out.

--action 'UNIT ACTION [KEY=VALUE ...]' (repeatable; UNIT may be
SERVICE/leader) runs a charm action once the schedules reach the fixed
point, as an agent runs it (actions/<name>, ops dispatch, or a Go charm's
charmapi.MainWithActions), its params checked against the charm's
declaration; what it writes applies as a hook's result, and the schedules
run to the fixed point again. Each action's status, message, log and
results are printed. An action the charm does not declare is bad input.

Resources reach the units as under up: the environment file's
services.X.resources.NAME: "PATH" (relative to the file), or without -f
--resource SERVICE:NAME=PATH (repeatable, relative to the working
directory). Each file is read and checked as vet and plan check it (a
regular file of at most 64 MiB, a resource the charm declares), the
universe's resources carry its sha256 digest, and each unit finds it in
its own directory as resources/NAME/FILENAME, where resource-get (and
ops's model.resources.fetch) points. A resource the charm declares and
nobody provides is not there: resource-get fails with Juju's error,
'ERROR could not download resource: resource "NAME" not found'.`,
		Example: `  fixpoint charm test ./myapp
  fixpoint charm test ./charms/db ./charms/web --units 3 --schedules 100
  fixpoint charm test -f env.cue --seed 7
  fixpoint charm test -f env.cue --seed 7 --schedule 12    # replay one, with its trace
  fixpoint charm test ./db --action 'db/leader backup target=/tmp/x'
  fixpoint charm test ./web --resource web:payload=./payload.txt`,
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			var env *sim.Env
			var err error
			switch {
			case len(files) > 0 && len(resources) > 0:
				return exitf(exitFailed, "charm test: --resource is for charms named without -f; give an environment's resources in its file (services: NAME: resources: ...)")
			case len(files) > 0:
				env, err = simdir.LoadEnv(files...)
				if err != nil {
					return exitf(exitFailed, "%s", packError(err))
				}
				if err := checkDeployed(env, args); err != nil {
					return err
				}
			case len(args) > 0:
				env, err = simdir.ForCharms(units, args...)
				if err != nil {
					return exitf(exitFailed, "%s", packError(err))
				}
				if err := charmResources(env, resources); err != nil {
					return exitf(exitFailed, "%v", err)
				}
				fmt.Fprintf(out, "environment made from the charms (write it to a file and pass -f to change it):\n%s\n", indentLines(env.Describe()))
			default:
				return exitf(exitFailed, "charm test: name charm directories, or an environment with -f ENV.cue")
			}
			acts, err := charmActions(actions)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			opts := sim.Options{Schedules: schedules, Seed: seed, Machines: machines, HookTimeout: hookTimeout, Trace: trace, NoUpdateStatus: noTimer, Actions: acts}
			if cmd.Flags().Changed("schedule") {
				opts.From, opts.Schedules, opts.Trace = schedule, 1, true
			}
			// Cancelling the context kills running hooks (and whatever they
			// started): they run in process groups of their own, which a
			// terminal's ^C does not reach.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, err := env.Simulate(ctx, opts)
			if ctx.Err() != nil {
				return exitf(exitInterrup, "interrupted")
			}
			if err != nil {
				return exitf(exitFailed, "%s", packError(err))
			}
			replayArgs := append([]string{"fixpoint", "charm", "test"}, args...)
			for _, f := range files {
				replayArgs = append(replayArgs, "-f", f)
			}
			if cmd.Flags().Changed("units") {
				replayArgs = append(replayArgs, fmt.Sprintf("--units %d", units))
			}
			if machines > 1 {
				replayArgs = append(replayArgs, fmt.Sprintf("--machines %d", machines))
			}
			if noTimer {
				replayArgs = append(replayArgs, "--no-update-status")
			}
			for _, a := range actions {
				replayArgs = append(replayArgs, fmt.Sprintf("--action %q", a))
			}
			for _, r := range resources {
				replayArgs = append(replayArgs, fmt.Sprintf("--resource %q", r))
			}
			rep.Replay = func(seed uint64, i int) string {
				return fmt.Sprintf("%s --seed %d --schedule %d", strings.Join(replayArgs, " "), seed, i)
			}
			fmt.Fprint(out, rep.String())
			var failed *model.Action
			if len(rep.Schedules) > 0 {
				failed = printCharmActions(out, rep.Schedules[0].Actions)
			}
			switch {
			case rep.OK() && failed != nil:
				return exitf(exitUnmet, "action %s on %s failed: %s", failed.Name, failed.Unit, failed.Message)
			case rep.OK():
				return nil
			case rep.Converged() == len(rep.Schedules) && len(rep.Nondeterministic) == 0 && len(rep.FixedPoints) > 1:
				return exitf(exitDiffers, "the schedules reached %d different fixed points", len(rep.FixedPoints))
			case rep.Converged() == len(rep.Schedules) && len(rep.Nondeterministic) == 0:
				return exitf(exitUnmet, "%d unit(s) end with another status than the environment's expect: says", len(rep.Unmet))
			}
			return exitf(exitUnitErr, "%d of %d schedule(s) did not converge", len(rep.Schedules)-rep.Converged(), len(rep.Schedules))
		},
	}
	cmd.Flags().StringSliceVarP(&files, "file", "f", nil, "environment file(s) or directory to simulate")
	cmd.Flags().IntVar(&units, "units", 2, "without -f: units of each charm")
	cmd.Flags().IntVar(&schedules, "schedules", 20, "how many schedules to try")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the schedules (the same seed runs the same schedules)")
	cmd.Flags().IntVar(&schedule, "schedule", 0, "run only the schedule with this number, and print its trace")
	cmd.Flags().IntVar(&machines, "machines", 1, "machines to spread units over (1: \"local\" at 127.0.0.1, as up)")
	cmd.Flags().BoolVar(&trace, "trace", false, "print every step of every schedule")
	hookTimeoutFlag(cmd.Flags(), &hookTimeout)
	cmd.Flags().StringArrayVar(&actions, "action", nil, "run 'UNIT ACTION [KEY=VALUE ...]' at the fixed point, then settle again (repeatable)")
	cmd.Flags().StringArrayVar(&resources, "resource", nil, "without -f: give a service's resource a file, SERVICE:NAME=PATH (repeatable)")
	cmd.Flags().BoolVar(&noTimer, "no-update-status", false, "do not fire the update-status timer when a schedule has nothing left to run")
	return cmd
}

// checkDeployed makes sure every charm directory named is used by env.
func checkDeployed(env *sim.Env, dirs []string) error {
	used := map[string]bool{}
	for _, s := range env.Services() {
		used[env.CharmDir(s)] = true
	}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return exitf(exitFailed, "%v", err)
		}
		if !used[filepath.Clean(abs)] {
			return exitf(exitFailed, "charm %s is not deployed by the environment; add a service for it, or leave it out", d)
		}
	}
	return nil
}

func indentLines(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}
