// Command chaos runs a three-node TLS control plane with three agents and
// an environment of related services while operator writes go on and a
// nemesis kills, pauses, fills the disk of and partitions its processes;
// then it heals everything and checks that nothing acknowledged was lost,
// the history is linearizable, the logs agree, every node caught up and
// the environment reached its fixed point with no unit running two hooks
// at once. Its last line is one JSON object; it exits 1 when a check
// fails. See bench/README.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"
	"text/tabwriter"
	"time"

	benchproc "github.com/fixpoint/fixpoint/bench/internal/proc"
	"github.com/fixpoint/fixpoint/bench/release"
)

// config is one run's knobs.
type config struct {
	bin        string
	previous   string // the previous release's fixpoint; "" builds it, "none" turns its fault off
	root       string // work dir; "" makes and removes a temporary one
	keep       bool
	serverLog  string
	duration   time.Duration
	writers    int
	readers    int
	writePause time.Duration
	readPause  time.Duration
	gap, hold  time.Duration
	diskMiB    int
	partition  bool
	bound      time.Duration // for the fixed point after the heal
	checkLimit time.Duration // porcupine's
	seed       uint64
	out        io.Writer
}

// result is the run's JSON line.
type result struct {
	Bench          string            `json:"bench"`
	Seconds        float64           `json:"seconds"`
	ChaosSeconds   float64           `json:"chaos_s"`
	Faults         map[string]int    `json:"faults"`
	Skipped        map[string]string `json:"skipped,omitempty"`
	Acked          int               `json:"acked"`
	Lost           int               `json:"lost"`
	Unknown        int               `json:"unknown"`
	Refused        int               `json:"refused"`
	Reads          int               `json:"reads"`
	Restarts       int               `json:"restarts"`
	RestartsFailed int               `json:"restarts_failed"`
	SelfExits      int               `json:"self_exits"`
	Linearizable   bool              `json:"linearizable"`
	FixedPointS    float64           `json:"fixed_point_s"`
	ConvergeS      float64           `json:"initial_converge_s"`
	Index          uint64            `json:"index"`
	WALEntries     int               `json:"wal_entries_compared"`
	HookRuns       int               `json:"hook_runs"`
	Overlaps       int               `json:"overlaps"`
	Failed         []string          `json:"failed,omitempty"`
}

func main() {
	var cfg config
	flag.StringVar(&cfg.previous, "previous", "", "the previous release's fixpoint, with fixpoint-hook and fixpoint-sh beside it, for the other-build fault (default: build "+release.Previous+" from the git history; none turns the fault off)")
	flag.StringVar(&cfg.bin, "bin", "", "the fixpoint binary, with fixpoint-hook and fixpoint-sh beside it (default: build them)")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the work dir (logs, data) and print where it is")
	flag.StringVar(&cfg.serverLog, "server-log-level", "warn", "the servers' --log-level (debug shows each vote and election)")
	flag.DurationVar(&cfg.duration, "duration", 10*time.Minute, "how long the nemesis runs")
	flag.IntVar(&cfg.writers, "writers", 2, "concurrent operator writers")
	flag.IntVar(&cfg.readers, "readers", 2, "concurrent readers")
	flag.DurationVar(&cfg.writePause, "write-pause", 250*time.Millisecond, "each writer's pause between writes")
	flag.DurationVar(&cfg.readPause, "read-pause", 100*time.Millisecond, "each reader's pause between reads")
	flag.DurationVar(&cfg.gap, "gap", 6*time.Second, "longest quiet time between two faults")
	flag.DurationVar(&cfg.hold, "hold", 6*time.Second, "longest time a fault lasts")
	flag.IntVar(&cfg.diskMiB, "disk-mib", 192, "size of each server's tmpfs data dir (needs root; 0 turns the disk fault off)")
	flag.BoolVar(&cfg.partition, "partition", true, "partition servers in network namespaces (needs root and ip netns)")
	flag.DurationVar(&cfg.bound, "fixed-point-bound", 5*time.Minute, "how long after the heal the fixed point may take")
	flag.DurationVar(&cfg.checkLimit, "check-timeout", 5*time.Minute, "how long porcupine may search")
	flag.Uint64Var(&cfg.seed, "seed", uint64(time.Now().UnixNano()), "the nemesis's random seed")
	flag.Parse()
	cfg.out = os.Stdout
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, checks, err := run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
	}
	if res != nil {
		report(os.Stdout, res, checks)
	}
	if err != nil || res == nil || len(res.Failed) > 0 {
		os.Exit(1)
	}
}

// run is the whole bench: set up, chaos, heal, check, clean up (also when
// ctx ends early).
func run(ctx context.Context, cfg config) (res *result, checks []check, err error) {
	start := time.Now()
	repo, err := benchproc.RepoRoot()
	if err != nil {
		return nil, nil, err
	}
	root := cfg.root
	if root == "" {
		if root, err = os.MkdirTemp("", "fpchaos-"); err != nil {
			return nil, nil, err
		}
		defer func() {
			if cfg.keep {
				fmt.Fprintf(cfg.out, "work dir kept: %s\n", root)
				return
			}
			_ = os.RemoveAll(root)
		}()
	}
	bin := cfg.bin
	if bin == "" {
		if bin, err = build(ctx, repo, filepath.Join(root, "bin")); err != nil {
			return nil, nil, err
		}
	} else if _, err := os.Stat(filepath.Join(filepath.Dir(bin), "fixpoint-sh")); err != nil {
		return nil, nil, fmt.Errorf("-bin %s: fixpoint-sh must be beside it: %w", bin, err)
	}
	prev, prevOff, err := previousBuild(ctx, cfg, repo, root)
	if err != nil {
		return nil, nil, err
	}
	nw, err := newNetwork(fmt.Sprint(os.Getpid()), 3, cfg.partition)
	if err != nil {
		return nil, nil, err
	}
	defer nw.teardown()
	c, err := startCluster(ctx, bin, prev, prevOff, root, nw, cfg.diskMiB, cfg.serverLog)
	defer c.unmount(cfg.keep)
	defer c.stop()
	if err != nil {
		return nil, nil, err
	}
	env, err := makeEnv(repo, root)
	if err != nil {
		return nil, nil, err
	}
	if err := env.upload(ctx, c); err != nil {
		return nil, nil, err
	}
	body, err := env.deploy(initialValue)
	if err != nil {
		return nil, nil, err
	}
	if _, err := c.any(ctx, "POST", "/v1/deploy", map[string]string{"X-Request-Id": "chaos-initial"}, body, nil); err != nil {
		return nil, nil, fmt.Errorf("deploy the environment: %w", err)
	}
	converge, err := fixedPoint(ctx, c, cfg.bound)
	if err != nil {
		return nil, nil, fmt.Errorf("the environment's first deploy: %w", err)
	}
	fmt.Fprintf(cfg.out, "cluster up, environment converged in %.1fs; chaos for %s (seed %d)\n", converge.Seconds(), cfg.duration, cfg.seed)

	h := newHistory()
	issue, stopIssuing := context.WithCancel(ctx)
	hard, giveUp := context.WithCancel(ctx)
	defer giveUp()
	done := make(chan struct{})
	var clients int
	for i := range cfg.writers {
		clients++
		go func() { h.write(issue, hard, c, env, i, cfg.writePause); done <- struct{}{} }()
	}
	for i := range cfg.readers {
		clients++
		go func() { h.read(issue, c, cfg.writers+i, cfg.readPause); done <- struct{}{} }()
	}
	chaosStart := time.Now()
	n := newNemesis(c, cfg.seed, cfg.out, cfg.gap, cfg.hold)
	for kind, why := range n.skipped {
		fmt.Fprintf(cfg.out, "skipping %s: %s\n", kind, why)
	}
	n.run(ctx, chaosStart.Add(cfg.duration))
	stopIssuing()
	chaosTime := time.Since(chaosStart)
	n.logf("healing")
	n.heal(ctx)
	healed := time.Now()
	resolve := time.AfterFunc(3*time.Minute, giveUp)
	for range clients {
		<-done
	}
	resolve.Stop()
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}

	res = &result{Bench: "chaos", ChaosSeconds: chaosTime.Seconds(), Faults: n.counts, Skipped: n.skipped,
		Restarts: n.restarts, RestartsFailed: n.restartsFailed, SelfExits: n.selfExits, ConvergeS: converge.Seconds()}
	add := func(name string, err error, what string) {
		ck := check{name: name, ok: err == nil, what: what}
		if err != nil {
			ck.what = err.Error()
			res.Failed = append(res.Failed, name)
		}
		checks = append(checks, ck)
	}
	add("restarts", failures(n.failures), fmt.Sprintf("%d restarts, %d processes exited by themselves", n.restarts, n.selfExits))

	fp, err := fixedPoint(ctx, c, cfg.bound)
	res.FixedPointS = time.Since(healed).Seconds()
	add("fixed point", err, fmt.Sprintf("every unit settled %.1fs after the heal (%.1fs of polling)", res.FixedPointS, fp.Seconds()))
	idx, err := caughtUp(ctx, c, 2*time.Minute)
	res.Index = idx
	add("caught up", err, fmt.Sprintf("all three applied and hold index %d", idx))
	if err != nil {
		res.RestartsFailed++
	}

	h.mu.Lock()
	res.Acked, res.Unknown, res.Refused, res.Reads = len(h.acked), h.unknown, h.refused, h.reads
	acked := append([]ack(nil), h.acked...)
	h.mu.Unlock()
	st, err := statesAgree(ctx, c)
	add("states agree", err, fmt.Sprintf("byte-equal state on all three at index %d", idx))
	if st != nil {
		lost, checked, missing := lostWrites(st, acked)
		res.Lost = lost
		var lerr error
		if lost > 0 {
			lerr = fmt.Errorf("%d acknowledged writes lost: %v", lost, missing[:min(5, len(missing))])
		}
		add("no write lost", lerr, fmt.Sprintf("%d acked writes, %d still remembered by id and all held at their index", len(acked), checked))
	}
	if last, ok := h.last(); ok {
		var ferr error
		if bad := finalValues(ctx, c, last.V); len(bad) > 0 {
			ferr = fmt.Errorf("the last acked write (%d at index %d) is not what every server reads: %v", last.V, last.Index, bad)
			if res.Lost == 0 {
				res.Lost = 1
			}
		}
		add("final value", ferr, fmt.Sprintf("every service on every server reads %d, the last acked write (index %d)", last.V, last.Index))
	}
	overlaps, runs, err := hookOverlaps(env)
	res.HookRuns, res.Overlaps = runs, len(overlaps)
	if err == nil && len(overlaps) > 0 {
		err = fmt.Errorf("%d hooks began while the unit's previous hook ran: %v", len(overlaps), overlaps[:min(5, len(overlaps))])
	}
	add("one hook at a time", err, fmt.Sprintf("%d hook runs, none began while another of its unit ran", runs))

	lin, err := h.linearizable(cfg.checkLimit, filepath.Join(os.TempDir(), fmt.Sprintf("chaos-history-%d.html", os.Getpid())))
	res.Linearizable = lin == "Ok"
	if err == nil && !res.Linearizable {
		err = fmt.Errorf("porcupine: %s (the visualisation is in %s)", lin, filepath.Join(os.TempDir(), fmt.Sprintf("chaos-history-%d.html", os.Getpid())))
	}
	add("linearizable", err, fmt.Sprintf("%d writes (%d unknown), %d reads", len(acked)+res.Unknown, res.Unknown, res.Reads))

	c.stop()
	entries, err := walsAgree(c)
	res.WALEntries = entries
	add("raft logs agree", err, fmt.Sprintf("%d entries equal in all three logs", entries))
	res.Seconds = time.Since(start).Seconds()
	return res, checks, nil
}

// failures is the restart failures as one error, nil without any.
func failures(msgs []string) error {
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%d restarts failed; first: %s", len(msgs), msgs[0])
}

// previousBuild is the previous release's fixpoint (with fixpoint-hook and
// fixpoint-sh beside it): -previous, else built from the git history; or
// why the other-build fault cannot run.
func previousBuild(ctx context.Context, cfg config, repo, root string) (bin, off string, err error) {
	switch cfg.previous {
	case "none":
		return "", "turned off (-previous none)", nil
	case "":
		dir, err := release.Build(ctx, repo, release.Previous, filepath.Join(root, "previous"), "./cmd/fixpoint", "./cmd/fixpoint-hook", "./cmd/fixpoint-sh")
		if errors.Is(err, release.ErrNoHistory) {
			return "", err.Error(), nil
		}
		if err != nil {
			return "", "", err
		}
		return filepath.Join(dir, "fixpoint"), "", nil
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(cfg.previous), "fixpoint-sh")); err != nil {
		return "", "", fmt.Errorf("-previous %s: fixpoint-sh must be beside it: %w", cfg.previous, err)
	}
	return cfg.previous, "", nil
}

// build compiles fixpoint, fixpoint-hook and fixpoint-sh into dir.
func build(ctx context.Context, repo, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dir+"/", "./cmd/fixpoint", "./cmd/fixpoint-hook", "./cmd/fixpoint-sh")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build fixpoint: %v: %s", err, out)
	}
	return filepath.Join(dir, "fixpoint"), nil
}

// report prints the faults and checks as tables, then the JSON line.
func report(w io.Writer, res *result, checks []check) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nFAULT\tCOUNT")
	var kinds []string
	for k := range res.Faults {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(tw, "%s\t%d\n", k, res.Faults[k])
	}
	for k, why := range res.Skipped {
		fmt.Fprintf(tw, "%s\tskipped: %s\n", k, why)
	}
	fmt.Fprintln(tw, "\nCHECK\tRESULT\tDETAIL")
	for _, ck := range checks {
		verdict := "ok"
		if !ck.ok {
			verdict = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", ck.name, verdict, ck.what)
	}
	tw.Flush()
	line, _ := json.Marshal(res)
	fmt.Fprintf(w, "%s\n", line)
}
