// Command envs measures what many environments on one control plane cost
// against one environment of as many units, and that a change in one
// environment costs the others nothing.
//
//	go run ./bench/envs -envs 100 -units-per-env 1000
//	go run ./bench/envs -envs 10 -units-per-env 200    # a quick local check
//
// Many vs one: three `fixpoint server` processes on loopback and
// simulated agents (bench/internal/simagent: the demo's db/web logic as
// Go functions, polling with envs=1) converge -envs environments of
// -units-per-env units each, then, on a fresh cluster, one environment of
// envs·units units; each is applied with `fixpoint apply -f` (-parallel
// applies at once). It prints the time from the first apply to the fixed
// point of every environment, the leader's peak resident memory and CPU
// seconds, and the ratios many/one. -pairs runs more pairs, alternating
// which runs first.
//
// Isolation, counted not timed: at the many run's fixed point, one
// config edit of the first environment (re-applied from its file), then
// the universes rebuilt and work polls woken in every environment, read
// from the leader's /metrics (fixpoint_universes_rebuilt_total,
// fixpoint_work_polls_woken_total by env label): the others' must not
// move.
//
// The last line is one JSON object with every figure.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fixpoint/fixpoint/bench/internal/proc"
	"github.com/fixpoint/fixpoint/bench/internal/servers"
	"github.com/fixpoint/fixpoint/bench/internal/simagent"
	"github.com/fixpoint/fixpoint/engine/api"
)

// binDir holds the binary under test; check removes it on the way out.
var binDir string

// opts are the flags a run needs.
type opts struct {
	bin, root   string
	machines    int
	parallel    int
	timeout     time.Duration
	cpuProfile  string
	heapProfile string
	// cpuProfileFor is how long the CPU profile runs from the first
	// apply.
	cpuProfileFor time.Duration
}

// run is one cluster's figures: Envs environments of UnitsPerEnv units.
type run struct {
	Kind        string  `json:"kind"`
	Envs        int     `json:"envs"`
	UnitsPerEnv int     `json:"units_per_env"`
	Seconds     float64 `json:"seconds"`
	// ApplySeconds is how long the applies took, part of Seconds.
	ApplySeconds float64 `json:"apply_s"`
	// LeaderRSSMiB and LeaderCPU are the leader's peak resident memory
	// (VmHWM) and CPU seconds at the fixed point; RSSMiB and CPU every
	// node's, in node order.
	LeaderRSSMiB float64    `json:"leader_peak_rss_mib"`
	LeaderCPU    float64    `json:"leader_cpu_s"`
	RSSMiB       []float64  `json:"peak_rss_mib"`
	CPU          []float64  `json:"cpu_s"`
	Isolation    *isolation `json:"isolation,omitempty"`
	// LeaderMoved says an election moved the leader during the run: the
	// leader's figures are then the last leader's, which led only part
	// of it.
	LeaderMoved bool `json:"leader_moved,omitempty"`
}

// summary is the last line.
type summary struct {
	Bench       string  `json:"bench"`
	Commit      string  `json:"commit"`
	Load        string  `json:"load"`
	Envs        int     `json:"envs"`
	UnitsPerEnv int     `json:"units_per_env"`
	Machines    int     `json:"machines"`
	Runs        []run   `json:"runs"`
	TimeRatio   float64 `json:"time_ratio"`
	RSSRatio    float64 `json:"rss_ratio"`
	CPURatio    float64 `json:"cpu_ratio"`
	// Isolation is the last many run's.
	Isolation *isolation `json:"isolation"`
}

func main() {
	envs := flag.Int("envs", 100, "environments of the many run")
	per := flag.Int("units-per-env", 1000, "units of each environment (50-unit db/web pairs; a multiple of 100)")
	pairs := flag.Int("pairs", 1, "many/one pairs, alternating which runs first")
	o := opts{}
	flag.IntVar(&o.machines, "machines", 10, "simulated agents")
	flag.IntVar(&o.parallel, "parallel", 4, "applies in flight at once")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Minute, "give up on one run after this long")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write the leader's CPU profile of each run, -cpuprofile-for from its first apply, to this file with the run's kind appended")
	flag.DurationVar(&o.cpuProfileFor, "cpuprofile-for", time.Minute, "how long the CPU profile runs")
	flag.StringVar(&o.heapProfile, "heapprofile", "", "write the leader's heap profile at each run's fixed point to this file with the run's kind appended")
	flag.Parse()
	if *envs < 1 || *per < 100 || *per%100 != 0 || *pairs < 1 {
		check(fmt.Errorf("-envs %d -units-per-env %d -pairs %d: need at least one environment, units in multiples of 100 and one pair", *envs, *per, *pairs))
	}
	root, err := proc.RepoRoot()
	check(err)
	o.root = root
	// A binary of this run's own: a rebuild by another run must not
	// change it mid-measurement.
	binDir, err = os.MkdirTemp("", "envs-bin-")
	check(err)
	defer os.RemoveAll(binDir)
	o.bin = filepath.Join(binDir, "fixpoint")
	build := exec.Command("go", "build", "-o", o.bin, "./cmd/fixpoint")
	build.Dir, build.Stderr = root, os.Stderr
	check(build.Run())

	sum := summary{Bench: "envs", Envs: *envs, UnitsPerEnv: *per, Machines: o.machines, Commit: commit(root)}
	var many, one run
	fmt.Printf("%-5s %-6s %-10s %-10s %-9s %-9s %s\n", "kind", "envs", "units/env", "seconds", "apply s", "RSS MiB", "leader CPU s")
	for p := 0; p < *pairs; p++ {
		kinds := []string{"many", "one"}
		if p%2 == 1 {
			kinds = []string{"one", "many"}
		}
		for _, kind := range kinds {
			n, u := *envs, *per
			if kind == "one" {
				n, u = 1, *envs**per
			}
			r := measure(o, kind, n, u)
			moved := ""
			if r.LeaderMoved {
				moved = " (an election moved the leader)"
			}
			fmt.Printf("%-5s %-6d %-10d %-10.1f %-9.1f %-9.0f %.1f%s\n", kind, n, u, r.Seconds, r.ApplySeconds, r.LeaderRSSMiB, r.LeaderCPU, moved)
			sum.Runs = append(sum.Runs, r)
			if kind == "many" {
				many.add(r)
				sum.Isolation = r.Isolation
			} else {
				one.add(r)
			}
		}
	}
	sum.TimeRatio = many.Seconds / one.Seconds
	sum.RSSRatio = many.LeaderRSSMiB / one.LeaderRSSMiB
	sum.CPURatio = many.LeaderCPU / one.LeaderCPU
	fmt.Printf("many/one (target ≤ 1.1): time %.2f, leader peak RSS %.2f, leader CPU %.2f\n", sum.TimeRatio, sum.RSSRatio, sum.CPURatio)
	if iso := sum.Isolation; iso != nil {
		fmt.Printf("one config edit in %s: %d universes rebuilt, %d polls woken there; in the %d others: %d rebuilt, %d woken\n",
			iso.Changed, iso.RebuiltChanged, iso.WokenChanged, *envs-1, iso.RebuiltOthers, iso.WokenOthers)
	}
	sum.Load = load()
	out, err := json.Marshal(sum)
	check(err)
	fmt.Println(string(out))
}

// add sums r's figures into the pair totals the ratios are taken of.
func (a *run) add(r run) {
	a.Seconds += r.Seconds
	a.LeaderRSSMiB += r.LeaderRSSMiB
	a.LeaderCPU += r.LeaderCPU
}

// measure starts a cluster and its agents, applies n environments of u
// units each, waits for every one's fixed point and, for the many run,
// counts what one change costs the others.
func measure(o opts, kind string, n, u int) run {
	dir, err := os.MkdirTemp("", "envs-"+kind+"-")
	check(err)
	defer os.RemoveAll(dir)
	cl, err := servers.Start(o.bin, dir, nil, func(string) []string { return []string{"--agent-ttl", "10m"} })
	defer cl.Stop()
	check(err)
	var addrs []string
	for _, s := range cl.Servers {
		addrs = append(addrs, s.Addr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	op := api.NewClient(addrs, cl.Token, nil)
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("e%d", i)
		if kind == "one" {
			names[i] = "one"
		}
		_, err := op.AddEnv(ctx, api.NewEnv{Name: names[i]})
		check(err)
	}
	join := strings.TrimSpace(string(must(os.ReadFile(filepath.Join(cl.Servers[0].Dir, "join.token")))))
	for m := 0; m < o.machines; m++ {
		c := api.NewClient(addrs, join, nil)
		name := fmt.Sprintf("m%d", m)
		check(c.Register(ctx, name, "127.0.0.1"))
		wg.Add(1)
		go func() {
			defer wg.Done()
			simagent.Run(ctx, c, name)
		}()
	}
	files := make([]string, n)
	for i, name := range names {
		files[i] = filepath.Join(dir, name+".cue")
		check(os.WriteFile(files[i], []byte(simagent.Environment(name, o.root, u, nil)), 0o644))
	}
	first, err := cl.Pick("leader")
	check(err)
	profiled := startCPUProfile(o, cl, first, kind)
	start := time.Now()
	applyAll(o, dir, addrs, cl.Token, files)
	applied := time.Since(start)
	leader, err := waitFixed(cl, names, u, o.timeout)
	if err != nil {
		check(fmt.Errorf("%s run: %w", kind, err))
	}
	r := run{Kind: kind, Envs: n, UnitsPerEnv: u, Seconds: time.Since(start).Seconds(), ApplySeconds: applied.Seconds(), LeaderMoved: leader != first}
	profiled()
	for _, s := range cl.Servers {
		r.RSSMiB = append(r.RSSMiB, proc.PeakRSS(s.Cmd.Process.Pid))
		self, _ := proc.CPU(s.Cmd.Process.Pid)
		r.CPU = append(r.CPU, self)
		if s == leader {
			r.LeaderRSSMiB, r.LeaderCPU = r.RSSMiB[len(r.RSSMiB)-1], self
		}
	}
	if o.heapProfile != "" {
		check(saveProfile(cl, leader, "/debug/pprof/heap?gc=1", o.heapProfile+"."+kind))
	}
	if kind == "many" {
		r.Isolation = isolate(o, cl, leader, dir, addrs, names, u)
	}
	return r
}

// applyAll runs `fixpoint apply -f` of every file, o.parallel at once.
func applyAll(o opts, dir string, addrs []string, token string, files []string) {
	sem := make(chan struct{}, max(o.parallel, 1))
	var wg sync.WaitGroup
	errs := make(chan error, len(files))
	for _, f := range files {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs <- apply(o.bin, dir, addrs, token, f)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		check(err)
	}
}

// apply runs `fixpoint apply -f file --yes` against addrs.
func apply(bin, dir string, addrs []string, token, file string) error {
	cmd := exec.Command(bin, "apply", "-f", file, "--yes", "--controller", strings.Join(addrs, ","), "--data-dir", dir)
	cmd.Env = append(os.Environ(), "FIXPOINT_TOKEN="+token)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("apply -f %s: %v\n%s", file, err, proc.Tail(string(out), 2000))
	}
	return nil
}

// commit is the checkout's commit, with "+dirty" when it has changes.
func commit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		c += "+dirty"
	}
	return c
}

// load is /proc/loadavg's three averages.
func load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func must[T any](v T, err error) T {
	check(err)
	return v
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "envs:", err)
		if binDir != "" {
			_ = os.RemoveAll(binDir)
		}
		os.Exit(1)
	}
}
