// Command agents measures how fast a committed change reaches the agents
// it concerns, with many agents long-polling one control plane.
//
//	go run ./bench/agents -agents 1000 -services 10 -changes 5
//
// It starts one `fixpoint server`, registers N simulated agents (one
// machine each, one unit per machine: S services of N/S units), converges,
// then applies config changes to one service at a time. For each change it
// prints the time from the commit to each affected agent's long poll
// returning with work, p50/p99/max, checks that no other agent woke, and
// the control plane's CPU time and peak memory.
//
// A poll returns when the first byte of its answer arrives: the server
// writes the status only once the hand-out is done, so that is the
// server's wake. Two times are taken for it: when the agent's goroutine
// read that byte (p50, p99, wake_p50_ms, wake_p99_ms), and when the
// kernel put it in the agent's socket (software receive stamps,
// SO_TIMESTAMPING: "arrived", arrived_p50_ms, arrived_p99_ms). The
// second is what an agent on its own machine would see; the first adds
// the time this process, with 1,000 agents, waited for a core the
// server was using. The simulated agents then read only each unit's name and
// hash, not its universe: 1,000 agents decoding universes on the server's
// own cores measured the bench, not the server (real agents decode on
// their own machines). -fixpoint runs a server binary built elsewhere, so
// that the same bench measures an old and a new server. The commit is when the
// server applied the change's entry (GET /v1/debug/applied, the index the
// deploy answered). Each change is applied as `fixpoint apply` does it,
// plan, then deploy, from this process with every round's environment
// packed before the rounds (-apply api), or by a `fixpoint apply` process
// per change (-apply cli): that process's exit, 10-20 ms after the commit,
// took a core from the server in the middle of the wake (bench/README.md).
// The column "apply exit" shows when the deploy's answer came (api) or
// the process exited (cli), after the commit.
//
// Each simulated agent keeps its own connection open between polls, as
// each real agent's process does, and speaks HTTP/1.1 on it directly
// (raw.go), and reports at once unless -hook says how long its hook runs. The line
// "change rounds" splits the CPU of the rounds between the server, this
// bench and the apply runs; -trace writes the server's runtime trace over
// one change (-trace-change).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fixpoint/fixpoint/bench/internal/proc"
	"github.com/fixpoint/fixpoint/bench/internal/rawhttp"
	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/wire"
)

func main() {
	agents := flag.Int("agents", 1000, "simulated agents, one machine and one unit each")
	services := flag.Int("services", 10, "services the units are spread over")
	changes := flag.Int("changes", 5, "config changes to measure, one service each")
	cpuprofile := flag.String("cpuprofile", "", "write the server's CPU profile from the first change on to this file")
	profileFor := flag.Duration("profile-for", 10*time.Second, "how long -cpuprofile profiles")
	hook := flag.Duration("hook", 0, "how long each simulated agent's hook runs before it reports (0: it reports at once)")
	traceFile := flag.String("trace", "", "write the server's runtime trace over one change to this file (go tool trace)")
	traceChange := flag.Int("trace-change", 1, "which change -trace records (the first is cold: the server's first hand-outs since the fixed point)")
	server := flag.String("fixpoint", "", "the fixpoint binary to run as the server (default: build ./cmd/fixpoint)")
	applyBy := flag.String("apply", "api", "how each change is applied: api (this process plans and deploys through the API, its environments packed before the rounds) or cli (a `fixpoint apply` process per change)")
	flag.Parse()
	if *applyBy != "api" && *applyBy != "cli" {
		check(fmt.Errorf("-apply is api or cli, not %q", *applyBy))
	}
	// The bench's own collections (a cycle per change round at the
	// default, with assists on the goroutines taking the first-byte
	// times) ran on the server's two cores in the middle of the wakes it
	// measures; its heap is a few tens of MB, so it trades memory for
	// fewer of them.
	debug.SetGCPercent(400)
	root := must(proc.RepoRoot())
	dir := must(os.MkdirTemp("", "bench-agents-"))
	defer os.RemoveAll(dir)
	bin := *server
	if bin == "" {
		bin = filepath.Join(dir, "fixpoint")
		build := exec.Command("go", "build", "-o", bin, "./cmd/fixpoint")
		build.Dir, build.Stderr = root, os.Stderr
		check(build.Run())
	}

	data := filepath.Join(dir, "cp")
	srv := exec.Command(bin, "server", "--node-id", "n1", "--data-dir", data, "--raft-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--bootstrap", "--log-level", "error", "--agent-ttl", "10m")
	check(srv.Start())
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	addr := waitAddr(filepath.Join(data, "controller.json"))
	token := strings.TrimSpace(string(must(os.ReadFile(filepath.Join(data, "operator.token")))))
	join := strings.TrimSpace(string(must(os.ReadFile(filepath.Join(data, "join.token")))))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	woke := map[string]wake{} // machine -> when its poll last returned work
	var wg sync.WaitGroup
	per := *agents / *services
	host := strings.TrimPrefix(strings.TrimPrefix(addr, "http://"), "https://")
	for i := 0; i < *agents; i++ {
		machine := fmt.Sprintf("m%04d", i)
		c := api.NewClient([]string{addr}, join, nil)
		var credential string
		c.UseCredential("", func(token string) error { credential = token; return nil })
		check(c.Register(ctx, machine, "127.0.0.1"))
		a := &rawAgent{machine: machine, c: rawhttp.Conn{Host: host, Token: credential, Kernel: true}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer a.close()
			for ctx.Err() == nil {
				body, answered, err := a.claim(ctx)
				if err != nil || body == nil {
					continue
				}
				mu.Lock()
				woke[machine] = answered
				mu.Unlock()
				if *hook > 0 {
					// The hook's run: a real one takes at least a process
					// start; a report at once puts the first agents'
					// results on the server's cores while the rest of
					// the change is handed out.
					select {
					case <-ctx.Done():
					case <-time.After(*hook):
					}
				}
				work, err := handedIn(machine, body)
				if err != nil {
					fmt.Fprintln(os.Stderr, "agents:", err)
					continue
				}
				reps := make([]wire.Report, len(work))
				for j, w := range work {
					reps[j] = wire.Report{Unit: w.Unit, Hash: w.Hash, Output: []byte(`{"status": {"state": "active"}}`)}
				}
				_ = a.report(ctx, reps)
			}
		}()
	}
	conns := make([]int, *services) // each service's max_connections
	env := func(round int) string {
		path := filepath.Join(dir, fmt.Sprintf("env%d.cue", round))
		if round > 0 {
			conns[(round-1)%*services] = round // one service changes per round
		}
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: \"fixpoint/v1\"\nname: \"agents\"\nservices: {\n")
		for s := 0; s < *services; s++ {
			conns := 100 + conns[s]
			fmt.Fprintf(&b, "\ts%d: {charm: %q, units: %d, config: {max_connections: %d}}\n", s, filepath.Join(root, "testdata/charms/db"), per, conns)
		}
		b.WriteString("}\n")
		check(os.WriteFile(path, []byte(b.String()), 0o644))
		return path
	}
	packed := map[string]*deployment{} // with -apply api, by environment file
	// apply applies the environment at path and returns what the apply
	// said ("applied at index N"), for appliedAt, and when the apply
	// process (or call) ended. The time the server applied the entry is
	// asked for once the round is over: asked at once, the request and
	// its answer took both processes' CPU in the wake being measured.
	apply := func(path string) (out string, exited time.Time) {
		if d := packed[path]; d != nil {
			index := must(deployPacked(addr, token, d))
			return fmt.Sprintf("applied at index %d", index), time.Now()
		}
		cmd := exec.Command(bin, "apply", "-f", path, "--yes", "--controller", addr, "--data-dir", dir)
		cmd.Env = append(os.Environ(), "FIXPOINT_TOKEN="+token)
		said, err := cmd.CombinedOutput()
		exited = time.Now()
		if err != nil {
			check(fmt.Errorf("apply: %v\n%s", err, said))
		}
		return string(said), exited
	}
	// With -apply api every round's environment is checked and packed
	// before the rounds, so that a round is two requests (plan, deploy)
	// from this process. A `fixpoint apply` per change spent about 10 ms
	// of CPU on these two cores in the 10 ms after the commit, most of it
	// the kernel tearing down the exiting process (perf sched and perf
	// record of the rounds, bench/README.md): the wake measured the
	// operator's command as much as the server.
	if *applyBy == "api" {
		for round := 1; round <= *changes; round++ {
			path := env(round)
			packed[path] = must(packEnv(filepath.Join(dir, "cache"), path))
		}
		clear(conns)
		// Checking and packing left CUE's garbage on this heap: it is
		// collected now, not in the middle of a change's wake.
		debug.FreeOSMemory()
	}
	cpu0 := cpuSeconds(srv.Process.Pid)
	start := time.Now()
	_, _ = apply(env(0))
	status := api.NewClient([]string{addr}, token, nil)
	waitConverged(status)
	initial := time.Since(start)
	fmt.Printf("%d agents, %d units in %d services: initial fixed point in %.1fs\n", *agents, *agents, *services, initial.Seconds())
	fmt.Printf("%-7s %-8s %-9s %-9s %-9s %-9s %-11s %-11s %-13s %-12s %-9s %-9s %-9s %s\n", "change", "woken", "first", "p50", "p99", "max", "arrived p50", "arrived p99", "others woken", "polls woken", "gc r/i", "bench gc", "steal", "apply exit")
	profiled := make(chan error, 1)
	if *cpuprofile != "" {
		go func() { profiled <- cpuProfile(addr, token, *profileFor, *cpuprofile) }()
	} else {
		profiled <- nil
	}
	serverCPU0, rounds0 := cpuSeconds(srv.Process.Pid), time.Now()
	steal0 := proc.Steal()
	// The most the hypervisor took in one change's round: what the
	// machine did to the run's tail, beside what the server did.
	var stealMax float64
	benchCPU0, applyCPU0 := selfCPU()
	var all, allArrived []time.Duration
	othersWoken := 0
	pollsTotal := 0.0
	gcRuntime, gcIdle := 0.0, 0.0
	// The bench's own collections: a cycle of this process, with its
	// 1,000 agents' stacks to scan, takes a core from the server.
	var benchGC uint64
	for round := 1; round <= *changes; round++ {
		mu.Lock()
		woke = map[string]wake{}
		mu.Unlock()
		c0 := scrape(addr, token)
		traced := make(chan error, 1)
		if round == *traceChange && *traceFile != "" {
			go func() { traced <- serverTrace(addr, token, 2*time.Second, *traceFile) }()
			time.Sleep(200 * time.Millisecond) // let the trace start: a diagnostic, not a measurement
		} else {
			traced <- nil
		}
		gc0 := gcCycles()
		roundSteal := proc.Steal()
		applied, exited := apply(env(round))
		waitConverged(status)
		committed := appliedAt(addr, token, applied)
		s := (round - 1) % *services
		var lat, arrived []time.Duration
		others := 0
		mu.Lock()
		for machine, w := range woke {
			if unitService(status, machine) == fmt.Sprintf("s%d", s) {
				lat = append(lat, w.read.Sub(committed))
				if !w.arrived.IsZero() {
					arrived = append(arrived, w.arrived.Sub(committed))
				}
			} else {
				others++
			}
		}
		mu.Unlock()
		check(<-traced)
		slices.Sort(lat)
		slices.Sort(arrived)
		all = append(all, lat...)
		allArrived = append(allArrived, arrived...)
		othersWoken += others
		c1 := scrape(addr, token)
		polls := c1.polls - c0.polls
		if c0.polls >= 0 {
			pollsTotal += polls
		}
		gcRuntime += c1.gcAuto - c0.gcAuto
		gcIdle += c1.gcForced - c0.gcForced
		ownGC := gcCycles() - gc0
		benchGC += ownGC
		roundSteal = proc.Steal() - roundSteal
		stealMax = max(stealMax, roundSteal)
		fmt.Printf("s%-6d %-8d %-9s %-9s %-9s %-9s %-11s %-11s %-13d %-12s %-9s %-9d %-9s +%s\n", s, len(lat), pct(lat, 0), pct(lat, 50), pct(lat, 99), pct(lat, 100), pct(arrived, 50), pct(arrived, 99), others, wokenCell(c0.polls, polls), gcCell(c0, c1), ownGC,
			fmt.Sprintf("%.0fms", roundSteal*1000), exited.Sub(committed).Round(100*time.Microsecond))
	}
	serverCPU, rounds := cpuSeconds(srv.Process.Pid)-serverCPU0, time.Since(rounds0)
	steal := proc.Steal() - steal0
	benchCPU, applyCPU := selfCPU()
	benchCPU, applyCPU = benchCPU-benchCPU0, applyCPU-applyCPU0
	check(<-profiled)
	slices.Sort(all)
	slices.Sort(allArrived)
	fmt.Printf("all     %-8d %-9s %-9s %-9s %-9s %-11s %-11s\n", len(all), pct(all, 0), pct(all, 50), pct(all, 99), pct(all, 100), pct(allArrived, 50), pct(allArrived, 99))
	cpu, rss := cpuSeconds(srv.Process.Pid)-cpu0, proc.PeakRSS(srv.Process.Pid)
	fmt.Printf("control plane: %.1fs CPU over %.0fs, peak RSS %.0f MiB, %d goroutines polling\n",
		cpu, time.Since(start).Seconds(), rss, *agents)
	fmt.Printf("change rounds: %.1fs; CPU: server %.2fs, this bench %.2fs (agents, status waits), fixpoint apply %.2fs; taken by the hypervisor (steal) %.2fs, at most %.0f ms in one round\n",
		rounds.Seconds(), serverCPU, benchCPU, applyCPU, steal, stealMax*1000)
	summary, err := json.Marshal(map[string]any{
		"bench": "agents", "agents": *agents, "apply": *applyBy, "hook_ms": hook.Milliseconds(), "services": *services, "changes": *changes,
		"initial_s": initial.Seconds(), "wake_p50_ms": pctMs(all, 50), "wake_p99_ms": pctMs(all, 99),
		"wake_max_ms": pctMs(all, 100), "arrived_p50_ms": pctMs(allArrived, 50), "arrived_p99_ms": pctMs(allArrived, 99), "arrived_stamped": len(allArrived), "others_woken": othersWoken, "polls_woken_per_change": pollsTotal / float64(*changes), "gc_runtime": gcRuntime, "gc_idle": gcIdle, "bench_gc": benchGC, "cpu_s": cpu, "peak_rss_mib": rss,
		"rounds_s": rounds.Seconds(), "rounds_server_cpu_s": serverCPU, "rounds_bench_cpu_s": benchCPU, "rounds_apply_cpu_s": applyCPU,
		"rounds_steal_s": steal, "round_steal_max_ms": stealMax * 1000,
	})
	check(err)
	fmt.Println(string(summary))
	cancel()
	wg.Wait()
}

// handed is what the simulated agents read of a unit handed out: they
// run no hook, so the universe is skipped, not decoded.
type handed struct {
	Unit string `json:"unit"`
	Hash string `json:"hash"`
}

// counters are what the bench reads of the server's metrics around a
// change; -1 where the server does not count it.
type counters struct {
	// polls is fixpoint_work_polls_woken_total.
	polls float64
	// gcAuto and gcForced are the collections the runtime started and
	// those the server asked for (its idle collector).
	gcAuto, gcForced float64
}

// scrape reads the counters from the server's /metrics.
func scrape(addr, token string) counters {
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	req, err := http.NewRequest(http.MethodGet, addr+"/metrics", nil)
	check(err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	check(err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	check(err)
	c := counters{polls: -1, gcAuto: -1, gcForced: -1}
	fields := map[string]*float64{
		"fixpoint_work_polls_woken_total ":        &c.polls,
		"go_gc_cycles_automatic_gc_cycles_total ": &c.gcAuto,
		"go_gc_cycles_forced_gc_cycles_total ":    &c.gcForced,
	}
	for _, line := range strings.Split(string(body), "\n") {
		for name, v := range fields {
			if num, ok := strings.CutPrefix(line, name); ok {
				n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
				check(err)
				*v = n
			}
		}
	}
	return c
}

// gcCycles is how many collections this process has made.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// gcCell shows the collections between two scrapes, those the runtime
// started and those the server's idle collector ran, or "-" for a server
// that does not count them.
func gcCell(before, after counters) string {
	if before.gcAuto < 0 || before.gcForced < 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f/%.0f", after.gcAuto-before.gcAuto, after.gcForced-before.gcForced)
}

// wokenCell shows the polls woken by one change, or "-" for a server that
// does not count them.
func wokenCell(before, delta float64) string {
	if before < 0 {
		return "-"
	}
	return strconv.FormatFloat(delta, 'f', 0, 64)
}

// pctMs is the p-th percentile of sorted d in milliseconds, or -1 if d is
// empty.
func pctMs(d []time.Duration, p int) float64 {
	if len(d) == 0 {
		return -1
	}
	return float64(d[(len(d)-1)*p/100].Microseconds()) / 1000
}

var owners sync.Map // machine -> service, learned from status once

func unitService(c *api.Client, machine string) string {
	if v, ok := owners.Load(machine); ok {
		return v.(string)
	}
	st, err := c.Status(context.Background(), false, 0, 0)
	check(err)
	for _, u := range st.Units {
		owners.Store(u.Machine, u.Service)
	}
	v, _ := owners.Load(machine)
	s, _ := v.(string)
	return s
}

// waitConverged waits for the fixed point as `fixpoint wait` does
// (api.Client.WaitConverged): each poll of the status summary passes the
// one it last saw, so the polls are long and spaced as the CLI spaces
// them. A unit in error, or a fixed point of no units, ends the bench.
func waitConverged(c *api.Client) {
	outcome, sum, err := c.WaitConverged(context.Background(), api.WaitOptions{})
	check(err)
	if outcome != engine.FixedPoint || sum.Phases.Units == 0 {
		check(fmt.Errorf("no fixed point of the units: %s", sum.Summary))
	}
}

// cpuProfile writes the server's CPU profile over d to path.
func cpuProfile(addr, token string, d time.Duration, path string) error {
	return saveDebug(addr, token, fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(d.Seconds())), path)
}

// serverTrace writes the server's runtime trace over d to path.
func serverTrace(addr, token string, d time.Duration, path string) error {
	return saveDebug(addr, token, fmt.Sprintf("/debug/pprof/trace?seconds=%g", d.Seconds()), path)
}

// saveDebug writes what the server's operator-only debug endpoint at
// query answers to path.
func saveDebug(addr, token, query, path string) error {
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	req, err := http.NewRequest(http.MethodGet, addr+query, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", query, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s %v", query, resp.Status, err)
	}
	return os.WriteFile(path, data, 0o644)
}

// appliedAt asks the server when it applied the entry whose index
// `fixpoint apply` printed ("applied at index N").
func appliedAt(addr, token, applyOut string) time.Time {
	_, rest, ok := strings.Cut(applyOut, "applied at index ")
	if !ok {
		check(fmt.Errorf("apply printed no index: %s", applyOut))
	}
	index := strings.Fields(rest)[0]
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	req, err := http.NewRequest(http.MethodGet, addr+"/v1/debug/applied?index="+index, nil)
	check(err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	check(err)
	defer resp.Body.Close()
	var a api.Applied
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		check(fmt.Errorf("applied time of entry %s: %s: %s", index, resp.Status, body))
	}
	check(json.NewDecoder(resp.Body).Decode(&a))
	return a.AppliedAt
}

func pct(d []time.Duration, p int) string {
	if len(d) == 0 {
		return "-"
	}
	i := (len(d) - 1) * p / 100
	return d[i].Round(100 * time.Microsecond).String()
}

// selfCPU is the user+system CPU time of this process and, apart, of its
// children that ended (the apply runs; the server is waited for only at
// the end).
func selfCPU() (self, applies float64) {
	var s, k syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &s)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &k)
	sec := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return sec(s.Utime) + sec(s.Stime), sec(k.Utime) + sec(k.Stime)
}

// cpuSeconds is a process's user+system CPU time.
func cpuSeconds(pid int) float64 {
	self, _ := proc.CPU(pid)
	return self
}

func waitAddr(path string) string {
	for i := 0; i < 600; i++ {
		if data, err := os.ReadFile(path); err == nil {
			var e struct{ Addr string }
			if json.Unmarshal(data, &e) == nil && e.Addr != "" {
				return e.Addr
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	check(fmt.Errorf("%s never appeared", path))
	return ""
}

func must[T any](v T, err error) T {
	check(err)
	return v
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "agents:", err)
		os.Exit(1)
	}
}
