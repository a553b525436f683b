// Command oldhooks measures what running old per-event hooks costs next to
// reconcile hooks. For each size N it runs the same environment through
// the real binaries: N db units related to N web units, each service with
// its peer relation, with the reconcile charms (testdata/charms/db, web),
// with the same protocol as old hooks in POSIX sh (testdata/charms/
// classic-db, classic-web) and with a database and web pair written with
// Canonical's ops framework (testdata/ops/ops-db, ops-web, packed with the
// framework from ../shared/thirdparty/python-ops as TestOpsCharmsEndToEnd
// packs them), and prints the reconcile calls, the old hook executions,
// the hook tool calls and the time from the environment being applied to
// the fixed point.
//
//	go run ./bench/oldhooks                 # N = 10, 50, 100
//	go run ./bench/oldhooks -sizes 10 -timeout 1m -flavours classic,ops
//	go run ./bench/oldhooks -sizes 10 -timeout 12m -flavours classic-system,classic,classic-system,classic
//
// Flavour classic runs the classic charms' POSIX sh hooks in fixpoint-sh
// (hook tools as builtins, up's default); classic-system runs them with
// --hook-shell system, every tool call a process. A flavour may repeat:
// runs go in the order given, so alternating them compares the two under
// the same load.
//
// It builds fixpoint, fixpoint-hook and fixpoint-sh side by side, as `go
// install ./cmd/...` does, so the agent's hook tools are fixpoint-hook and
// its shell fixpoint-sh; the two tool programs with CGO_ENABLED=0, static,
// as the agent builds them itself under `go run`. Before
// each old-hook run it runs a probe environment: one unit whose install
// hook times, in that one hook and interleaved, spawning /bin/true,
// calling a hook tool (unit-get) through fixpoint-hook, and calling it
// through the fixpoint binary (the fallback where fixpoint-hook cannot be
// had): the cost of a tool call as a ratio to a spawn under the same load.
// The probe runs under the next run's hook shell: under builtin its
// unit-get is a fixpoint-sh builtin.
//
// Each run is a `fixpoint up` on a fresh data directory. Reconcile calls
// are the sum of the units' `reconciles` in the status; old hook
// executions are the lines the classic charms append to hooks.log in
// their unit directories, and for the ops charms the hooks of the agent's
// "old hooks ran" debug lines; tool calls are summed from those lines. A run that has not reached the fixed point when
// -timeout passes, or in which a unit fails, is stopped, and what it did
// until then is printed, marked as such. The last line of the output is
// one JSON object with the parameters and every figure.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/fixpoint/fixpoint/bench/internal/proc"
)

func main() {
	sizes := flag.String("sizes", "10,50,100", "comma-separated N: N db units related to N web units")
	timeout := flag.Duration("timeout", time.Minute, "how long one run may take to reach the fixed point before it is stopped")
	flavours := flag.String("flavours", "reconcile,classic,ops", "which charms to run, in this order (repeats allowed): reconcile, classic, classic-system, ops, comma-separated")
	opsFramework := flag.String("ops-framework", "", "Canonical's ops framework to pack the ops charms with (default: shared/thirdparty/python-ops beside the checkout)")
	probeCalls := flag.Int("probe-calls", 100, "calls of each kind the probe hook times, in 4 interleaved rounds")
	keep := flag.Bool("keep", false, "keep the temporary directory (environments, data directories, logs)")
	flag.Parse()
	cfg := config{timeout: *timeout, probeCalls: *probeCalls, keep: *keep, opsFramework: *opsFramework}
	if err := cfg.parse(*sizes, *flavours); err != nil {
		fmt.Fprintln(os.Stderr, "oldhooks:", err)
		os.Exit(2)
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "oldhooks:", err)
		os.Exit(1)
	}
}

// config is the bench's parameters.
type config struct {
	sizes      []int
	flavours   []string
	timeout    time.Duration
	probeCalls int
	keep       bool
	// opsFramework is the ops framework's directory; "" finds it.
	opsFramework string
}

func (c *config) parse(sizeList, flavourList string) error {
	sizes, err := proc.Counts("sizes", sizeList, 1, 10000)
	if err != nil {
		return err
	}
	c.sizes = sizes
	for _, f := range strings.Split(flavourList, ",") {
		f = strings.TrimSpace(f)
		if f != "reconcile" && f != "classic" && f != classicSystem && f != "ops" {
			return fmt.Errorf("-flavours: %q is not reconcile, classic, classic-system or ops", f)
		}
		c.flavours = append(c.flavours, f)
	}
	if c.probeCalls < 4 || c.probeCalls > 100000 {
		return fmt.Errorf("-probe-calls: %d is not from 4 to 100000", c.probeCalls)
	}
	return nil
}

// result is what one run measured.
type result struct {
	N          int     `json:"n"`
	Flavour    string  `json:"flavour"`
	Units      int     `json:"units"`
	Reconciles int     `json:"reconcile_calls"`
	Hooks      int     `json:"old_hooks"`
	ToolCalls  int     `json:"tool_calls"`
	Seconds    float64 `json:"seconds"`
	// CPUSeconds is the user and system time of up and all it ran, from
	// start to stop: what the run costs, whatever else loads the machine.
	CPUSeconds float64 `json:"cpu_seconds"`
	Converged  bool    `json:"converged"`
	Resolved   int     `json:"diverged_resolved"` // "diverged" verdicts the bench resolved
	Load       float64 `json:"load_avg"`          // mean 1-minute load average over the run
	Probe      *probe  `json:"probe,omitempty"`
	Note       string  `json:"note,omitempty"`
	took       time.Duration
}

func run(cfg config) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root, err := proc.RepoRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "oldhooks-")
	if err != nil {
		return err
	}
	if cfg.keep {
		fmt.Printf("working in %s\n", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	// The commit the binaries are built from, read before building.
	commit := "unknown"
	if out, err := exec.Command("git", "-C", root, "describe", "--always", "--dirty").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
	}
	binDir := filepath.Join(tmp, "bin")
	// The tool programs static, as the agent builds them under `go run`
	// and as README's CGO_ENABLED=0 install makes them: a dynamically
	// linked fixpoint-sh spends a sixth of its CPU in the loader.
	for _, b := range []struct {
		cgo  string
		pkgs []string
	}{{"", []string{"./cmd/fixpoint"}}, {"CGO_ENABLED=0", []string{"./cmd/fixpoint-hook", "./cmd/fixpoint-sh"}}} {
		build := exec.CommandContext(ctx, "go", append([]string{"build", "-o", binDir + "/"}, b.pkgs...)...)
		build.Dir = root
		if b.cgo != "" {
			build.Env = append(os.Environ(), b.cgo)
		}
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("%s go build %s: %v\n%s", b.cgo, strings.Join(b.pkgs, " "), err, out)
		}
	}
	b := &bench{bin: filepath.Join(binDir, "fixpoint"), charms: filepath.Join(root, "testdata", "charms"), tmp: tmp, cfg: cfg}
	if b.probeCharm, err = writeProbeCharm(tmp, b.bin, cfg.probeCalls); err != nil {
		return err
	}
	if slices.Contains(cfg.flavours, "ops") {
		if b.opsCharms, err = packOps(root, tmp, cfg.opsFramework); err != nil {
			return err
		}
	}
	var results []result
	for _, n := range cfg.sizes {
		for _, f := range cfg.flavours {
			if ctx.Err() != nil {
				break
			}
			var pr *probe
			if f != "reconcile" {
				fmt.Fprintf(os.Stderr, "N=%d probe ... ", n)
				p, err := b.once(ctx, n, probeService, hookShell(f))
				if err != nil {
					fmt.Fprintln(os.Stderr, "failed")
					return fmt.Errorf("N=%d probe: %w", n, err)
				}
				pr = p.Probe
				fmt.Fprintf(os.Stderr, "tool call %.2f× /bin/true (fallback %.2f×), load %.1f\n", pr.ToolRatio, pr.FallbackRatio, pr.Load)
			}
			fmt.Fprintf(os.Stderr, "N=%d %s ... ", n, f)
			r, err := b.once(ctx, n, f, hookShell(f))
			if err != nil {
				fmt.Fprintln(os.Stderr, "failed")
				return fmt.Errorf("N=%d %s: %w", n, f, err)
			}
			r.Probe = pr
			fmt.Fprintf(os.Stderr, "%s\n", r.summary())
			results = append(results, r)
		}
	}
	fmt.Println()
	printTable(results)
	fmt.Println()
	printProbes(results)
	fmt.Println()
	return printJSON(commit, cfg, results)
}

func printTable(results []result) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "N↔M\tcharms\tunits\treconcile calls\told hook runs\ttool calls\ttime to fixed point\tCPU time\tload avg\tnote")
	for _, r := range results {
		hooks, tools := "-", "-"
		if r.Flavour != "reconcile" {
			hooks, tools = strconv.Itoa(r.Hooks), strconv.Itoa(r.ToolCalls)
		}
		took := r.took.Round(10 * time.Millisecond).String()
		if !r.Converged {
			took = "> " + took
		}
		note := strings.ReplaceAll(r.Note, "\n", " ")
		if len(note) > 100 {
			note = note[:97] + "..."
		}
		fmt.Fprintf(tw, "%d↔%d\t%s\t%d\t%d\t%s\t%s\t%s\t%.1f s\t%.1f\t%s\n", r.N, r.N, r.Flavour, r.Units, r.Reconciles, hooks, tools, took, r.CPUSeconds, r.Load, note)
	}
	tw.Flush()
}

func printProbes(results []result) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "N↔M\tcharms\t/bin/true\ttool call\tratio\tfixpoint binary\tratio\tload avg\tprogram\tshell")
	for _, r := range results {
		p := r.Probe
		if p == nil {
			continue
		}
		fmt.Fprintf(tw, "%d↔%d\t%s\t%.2f ms\t%.2f ms\t%.2f×\t%.2f ms\t%.2f×\t%.1f\t%s\t%s\n", r.N, r.N, r.Flavour,
			p.TrueMS, p.ToolMS, p.ToolRatio, p.FallbackMS, p.FallbackRatio, p.Load, p.Program, p.Shell)
	}
	tw.Flush()
}

// printJSON prints the last line: the parameters and every figure.
func printJSON(commit string, cfg config, results []result) error {
	line, err := json.Marshal(map[string]any{
		"bench":       "oldhooks",
		"commit":      commit,
		"go":          runtime.Version(),
		"cpus":        runtime.NumCPU(),
		"sizes":       cfg.sizes,
		"flavours":    cfg.flavours,
		"timeout_s":   cfg.timeout.Seconds(),
		"probe_calls": cfg.probeCalls,
		"results":     results,
	})
	if err != nil {
		return err
	}
	fmt.Println(string(line))
	return nil
}

func (r result) summary() string {
	s := fmt.Sprintf("%d reconcile calls", r.Reconciles)
	if r.Flavour != "reconcile" {
		s += fmt.Sprintf(", %d old hook runs, %d tool calls", r.Hooks, r.ToolCalls)
	}
	if r.Converged {
		s += fmt.Sprintf(", fixed point after %s", r.took.Round(10*time.Millisecond))
	}
	s += fmt.Sprintf(", %.1f s CPU, load %.1f", r.CPUSeconds, r.Load)
	if p := r.Probe; p != nil {
		s += fmt.Sprintf(", tool call %.2f× /bin/true (fallback %.2f×)", p.ToolRatio, p.FallbackRatio)
	}
	if r.Note != "" {
		s += " (" + r.Note + ")"
	}
	return s
}
