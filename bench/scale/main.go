// Command scale measures how fixpoint converges as environments grow.
//
//	go run ./bench/scale -mode relate -n 10,100,1000
//	go run ./bench/scale -mode cluster -units 1000,10000
//	go run ./bench/scale -mode cluster -units 1000 -tls   # the API over HTTPS, as README's production setup
//	go run ./bench/scale -mode cluster -units 1000 -restart -join
//
// relate: an N<->N relation between the demo's db and web charms, each with
// its peer relation, run by `fixpoint up` with real hook processes (the
// charms compute their settings from every member). It prints the time to
// the fixed point and the distribution of reconciles per unit.
//
// cluster: three `fixpoint server` processes on loopback and simulated
// agents (Go functions with the demo's logic instead of hook processes, so
// the control plane is what is measured) over pairs of 50-unit services.
// It prints the time from apply to the fixed point and each node's peak
// resident memory; with -restart and -join, the time a restarted follower
// and a fourth node take to catch up at the fixed point.
//
// The last line is one JSON object with the figures of the largest size,
// for scripts.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fixpoint/fixpoint/bench/internal/benchtls"
	"github.com/fixpoint/fixpoint/bench/internal/proc"
	"github.com/fixpoint/fixpoint/bench/internal/servers"
	"github.com/fixpoint/fixpoint/bench/internal/simagent"
	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
)

var (
	heapProfile string
	cpuProfile  string
	// cpuProfileAt is when, after up starts, its CPU profile starts.
	cpuProfileAt time.Duration
	// binDir holds the binary under test; check removes it on the way out.
	binDir string
	// withTLS serves the cluster's API over HTTPS (-tls); secure is the
	// running cluster's CA and certificates then, nil otherwise.
	withTLS bool
	secure  *benchtls.Set
)

func main() {
	mode := flag.String("mode", "relate", "relate or cluster")
	ns := flag.String("n", "10,100", "relate: sizes N of the N<->N relation")
	units := flag.String("units", "1000", "cluster: total units")
	timeout := flag.Duration("timeout", 30*time.Minute, "give up on one size after this long")
	flag.StringVar(&heapProfile, "heapprofile", "", "cluster: write the first node's heap profile at the fixed point to this file; relate: up's heap profile when its resident memory was highest")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "relate: write a 60 s CPU profile of up, taken from -cpuprofile-at after its start, to this file")
	flag.DurationVar(&cpuProfileAt, "cpuprofile-at", 20*time.Second, "relate: when to start the CPU profile")
	flag.BoolVar(&withTLS, "tls", false, "cluster: serve the API over HTTPS with certificates from `fixpoint tls`, as README's production setup, the agents and commands trusting its CA")
	flag.BoolVar(&withRestart, "restart", false, "cluster: at the fixed point, snapshot a follower, restart it (SIGTERM, same flags and data dir) and time it until it has applied the leader's index and answers a stale read there")
	flag.BoolVar(&withJoin, "join", false, "cluster: at the fixed point (after -restart), snapshot the leader, start a fourth server with --join and time it until it is a voter at the leader's index and answers a stale read there")
	flag.StringVar(&ref, "ref", "", "cluster: also time this fixpoint binary's `plan`, `show-unit` and `config` at the fixed point, as the reference (e.g. a build from before POST /v1/plan or GET /v1/units)")
	flag.Parse()
	root, err := proc.RepoRoot()
	check(err)
	// A binary of this run's own: a rebuild by another run (another
	// checkout, another commit) must not change it mid-measurement.
	binDir, err = os.MkdirTemp("", "scale-bin-")
	check(err)
	defer os.RemoveAll(binDir)
	bin := filepath.Join(binDir, "fixpoint")
	build := exec.Command("go", "build", "-o", bin, "./cmd/fixpoint")
	build.Dir, build.Stderr = root, os.Stderr
	check(build.Run())
	var last summary
	switch *mode {
	case "relate":
		fmt.Printf("%-6s %-6s %-10s %-9s %-6s %s\n", "N", "units", "seconds", "runs", "mean", "reconciles per unit (count x units)")
		for _, n := range ints("n", *ns) {
			last = relate(bin, root, n, *timeout)
		}
	case "cluster":
		fmt.Printf("%-7s %-10s %-8s %-6s %s\n", "units", "seconds", "runs", "mean", "peak RSS per node (MiB)")
		for _, n := range ints("units", *units) {
			last = cluster(bin, root, n, *timeout)
		}
	default:
		check(fmt.Errorf("-mode %q: use relate or cluster", *mode))
	}
	last.Bench, last.Mode = "scale", *mode
	last.TLS = *mode == "cluster" && withTLS
	out, err := json.Marshal(last)
	check(err)
	fmt.Println(string(out))
}

// summary is the last line: one size's figures. Seconds is -1 when there
// was no fixed point within the timeout.
type summary struct {
	Bench string `json:"bench"`
	Mode  string `json:"mode"`
	Units int    `json:"units"`
	// TLS is whether the cluster served its API over HTTPS (-tls).
	TLS         bool      `json:"tls,omitempty"`
	Seconds     float64   `json:"seconds"`
	RunsPerUnit float64   `json:"runs_per_unit"`
	PeakRSSMiB  []float64 `json:"peak_rss_mib"`
	// RaftDBMiB and SnapshotMiB are the first node's log (raft.db and
	// the WAL's segments, as allocated) and latest snapshot on disk
	// (cluster mode).
	RaftDBMiB   float64 `json:"raft_db_mib,omitempty"`
	SnapshotMiB float64 `json:"snapshot_mib,omitempty"`
	// UpCPU and HooksCPU are the CPU seconds of fixpoint up itself and of
	// the hook processes it ran (relate mode): which of the two the time
	// to the fixed point is bound by.
	UpCPU    float64 `json:"up_cpu_s,omitempty"`
	HooksCPU float64 `json:"hooks_cpu_s,omitempty"`
	// CPU is each server's CPU seconds at the fixed point (cluster
	// mode), the leader first.
	CPU []float64 `json:"cpu_s,omitempty"`
	// Plan, ShowUnit and Config are `fixpoint plan` of the environment,
	// `show-unit db0/0` and `config db0` at its fixed point (cluster
	// mode); the *Ref fields the same with -ref's binary.
	Plan        *cmdRun `json:"plan,omitempty"`
	PlanRef     *cmdRun `json:"plan_ref,omitempty"`
	ShowUnit    *cmdRun `json:"show_unit,omitempty"`
	ShowUnitRef *cmdRun `json:"show_unit_ref,omitempty"`
	Config      *cmdRun `json:"config,omitempty"`
	ConfigRef   *cmdRun `json:"config_ref,omitempty"`
	// RestartSeconds (-restart) is from a follower's restart until it
	// caught up; JoinSeconds (-join) from a fourth node's start until
	// it did; -1 when it did not. The RSS fields are those processes'
	// peaks then.
	RestartSeconds float64 `json:"restart_s,omitempty"`
	RestartRSSMiB  float64 `json:"restart_peak_rss_mib,omitempty"`
	JoinSeconds    float64 `json:"join_s,omitempty"`
	JoinRSSMiB     float64 `json:"join_peak_rss_mib,omitempty"`
	// JoinSnapshot says the fourth node was sent the leader's snapshot;
	// false, it replayed the log the leader keeps past its snapshot.
	JoinSnapshot bool `json:"join_snapshot,omitempty"`
}

// summarize fills a summary from a converged status (nil: none reached).
func summarize(units int, elapsed time.Duration, st *engine.Status, rss []float64) summary {
	s := summary{Units: units, Seconds: -1, PeakRSSMiB: rss}
	if st == nil {
		return s
	}
	runs := 0
	for _, u := range st.Units {
		runs += u.Reconciles
	}
	s.Units, s.Seconds = len(st.Units), elapsed.Seconds()
	s.RunsPerUnit = float64(runs) / float64(len(st.Units))
	return s
}

func relate(bin, root string, n int, timeout time.Duration) summary {
	dir, err := os.MkdirTemp("", "scale-relate-")
	check(err)
	defer os.RemoveAll(dir)
	env := fmt.Sprintf(`apiVersion: "fixpoint/v1"
name: "scale"
services: {
	db:  {charm: %q, units: %d}
	web: {charm: %q, units: %d}
}
relations: "web-db": ["web:db", "db:db"]
`, filepath.Join(root, "testdata/charms/db"), n, filepath.Join(root, "testdata/charms/web"), n)
	path := filepath.Join(dir, "env.cue")
	check(os.WriteFile(path, []byte(env), 0o644))
	data := filepath.Join(dir, "data")
	start := time.Now()
	up := exec.Command(bin, "up", "-f", path, "--data-dir", data, "--agent-ttl", "10m")
	var out bytes.Buffer
	up.Stdout, up.Stderr = &out, &out
	check(up.Start())
	defer func() { _ = up.Process.Kill(); _ = up.Wait() }()
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		if heapProfile != "" {
			sampleHeap(up.Process.Pid, data, heapProfile, stopSampling)
		}
	}()
	if cpuProfile != "" {
		go func() {
			time.Sleep(cpuProfileAt)
			if err := saveProfile(data, "/debug/pprof/profile?seconds=60", cpuProfile); err != nil {
				fmt.Fprintln(os.Stderr, "scale:", err)
			}
		}()
	}
	st, done := waitConverged(bin, data, nil, timeout)
	close(stopSampling)
	<-sampled
	elapsed := done.Sub(start)
	rss := []float64{proc.PeakRSS(up.Process.Pid)}
	upCPU, hooksCPU := proc.CPU(up.Process.Pid)
	if st == nil {
		fmt.Printf("%-6d no fixed point within %s\n%s\n", n, timeout, proc.Tail(out.String(), 2000))
		return summarize(2*n, elapsed, nil, rss)
	}
	printRuns(fmt.Sprintf("%-6d %-6d %-10.1f", n, len(st.Units), elapsed.Seconds()), st)
	fmt.Printf("       peak RSS %.0f MiB; CPU: up %.1f s, hooks %.1f s\n", rss[0], upCPU, hooksCPU)
	sum := summarize(2*n, elapsed, st, rss)
	sum.UpCPU, sum.HooksCPU = upCPU, hooksCPU
	return sum
}

// waitConverged runs `fixpoint wait`, which long-polls the status
// summary (its size does not grow with the units), and returns when it
// ended; at the fixed point it then reads the full status once for the
// runs per unit. Polling the full status instead cost a fifth of the
// leader's CPU at 100,000 units (36 MB twice a second).
func waitConverged(bin, data string, addr []string, timeout time.Duration) (*engine.Status, time.Time) {
	args := []string{"wait", "--timeout", timeout.String(), "--data-dir", data}
	if addr != nil {
		args = append(args, "--controller", strings.Join(addr, ","))
		args = append(args, secure.ClientFlags()...)
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	done := time.Now()
	if err != nil {
		fmt.Fprintf(os.Stderr, "fixpoint wait: %v\n%s\n", err, proc.Tail(string(out), 2000))
		return nil, done
	}
	args[0], args[1], args[2] = "status", "--format", "json"
	out, err = exec.Command(bin, args...).Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "fixpoint status: %v\n", err)
		return nil, done
	}
	var st engine.Status
	if err := json.Unmarshal(out, &st); err != nil || !st.Converged || len(st.Units) == 0 {
		fmt.Fprintf(os.Stderr, "fixpoint status after wait: converged %v, %d units, %v\n", st.Converged, len(st.Units), err)
		return nil, done
	}
	return &st, done
}

func printRuns(prefix string, st *engine.Status) {
	hist := map[int]int{}
	total := 0
	for _, u := range st.Units {
		hist[u.Reconciles]++
		total += u.Reconciles
	}
	var keys []int
	for k := range hist {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%dx%d", k, hist[k]))
	}
	fmt.Printf("%s %-9d %-6.2f %s\n", prefix, total, float64(total)/float64(len(st.Units)), strings.Join(parts, " "))
}

func cluster(bin, root string, total int, timeout time.Duration) summary {
	dir, err := os.MkdirTemp("", "scale-cluster-")
	check(err)
	defer os.RemoveAll(dir)
	secure = nil
	if withTLS {
		nodes := []string{"n1", "n2", "n3"}
		if withJoin {
			nodes = append(nodes, joinID)
		}
		secure = must(benchtls.Make(bin, filepath.Join(dir, "tls"), nodes...))
	}
	cl, err := servers.Start(bin, dir, &http.Client{Transport: secure.Transport()}, func(id string) []string {
		return append([]string{"--agent-ttl", "10m"}, secure.ServerFlags(id)...)
	})
	defer cl.Stop()
	if err != nil {
		printLogs(cl)
		check(err)
	}
	var addrs []string
	for _, s := range cl.Servers {
		addrs = append(addrs, s.Addr)
	}
	token := cl.Token
	join := strings.TrimSpace(string(must(os.ReadFile(filepath.Join(cl.Servers[0].Dir, "join.token")))))
	// 50-unit services in db/web pairs, as many as make total units.
	envPath := filepath.Join(dir, "env.cue")
	check(os.WriteFile(envPath, []byte(simagent.Environment("big", root, total, nil)), 0o644))
	// Simulated agents: ten machines, registered before the apply so the
	// units spread over them.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for m := 0; m < 10; m++ {
		c := api.NewClient(addrs, join, &http.Client{Transport: secure.Transport()})
		name := fmt.Sprintf("m%d", m)
		check(c.Register(ctx, name, "127.0.0.1"))
		wg.Add(1)
		go func() {
			defer wg.Done()
			simagent.Run(ctx, c, name)
		}()
	}
	start := time.Now()
	apply := exec.Command(bin, append([]string{"apply", "-f", envPath, "--yes", "--controller", strings.Join(addrs, ","), "--data-dir", dir}, secure.ClientFlags()...)...)
	apply.Env = append(os.Environ(), "FIXPOINT_TOKEN="+token)
	if out, err := apply.CombinedOutput(); err != nil {
		check(fmt.Errorf("apply: %v\n%s", err, proc.Tail(string(out), 2000)))
	}
	os.Setenv("FIXPOINT_TOKEN", token)
	st, done := waitConverged(bin, dir, addrs, timeout)
	elapsed := done.Sub(start)
	var rss []string
	var rssMiB, cpu []float64
	for _, s := range cl.Servers {
		rssMiB = append(rssMiB, proc.PeakRSS(s.Cmd.Process.Pid))
		rss = append(rss, fmt.Sprintf("%.0f", rssMiB[len(rssMiB)-1]))
		self, _ := proc.CPU(s.Cmd.Process.Pid)
		cpu = append(cpu, self)
	}
	// The first node bootstraps the cluster and so leads it (unless an
	// election moved the lead): its CPU is the controller's.
	fmt.Printf("node CPU s: %v\n", cpu)
	if st == nil {
		printLogs(cl)
		fmt.Printf("%-7d no fixed point within %s; peak RSS %s\n", total, timeout, strings.Join(rss, " "))
		return summarize(total, elapsed, nil, rssMiB)
	}
	hist := map[int]int{}
	runs := 0
	for _, u := range st.Units {
		hist[u.Reconciles]++
		runs += u.Reconciles
	}
	fmt.Printf("%-7d %-10.1f %-8d %-6.2f %s\n", len(st.Units), elapsed.Seconds(), runs, float64(runs)/float64(len(st.Units)), strings.Join(rss, " "))
	if heapProfile != "" {
		check(saveHeap(addrs[0], token, heapProfile))
	}
	sum := summarize(total, elapsed, st, rssMiB)
	sum.CPU = cpu
	// What an operator's commands cost at this size: plan, as apply's
	// first step, and the reads of one unit and one service.
	timeCommands(&sum, bin, dir, envPath, addrs)
	segments, _ := filepath.Glob(filepath.Join(dir, "n1", "raft", "wal", "*"))
	for _, f := range append(segments, filepath.Join(dir, "n1", "raft", "raft.db")) {
		sum.RaftDBMiB += fileMiB(f)
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, "n1", "raft", "snapshots", "*", "state.bin"))
	if len(snaps) > 0 {
		sort.Strings(snaps)
		sum.SnapshotMiB = fileMiB(snaps[len(snaps)-1])
	}
	fmt.Printf("node n1: raft log %.1f MiB, latest snapshot %.1f MiB\n", sum.RaftDBMiB, sum.SnapshotMiB)
	// Last: their snapshots change what is on disk, and a fourth node
	// the membership.
	rejoin(&sum, cl, timeout)
	return sum
}

// saveProfile writes the profile at what (a /debug/pprof URL) of the
// up running on data to path.
func saveProfile(data, what, path string) error {
	raw, err := os.ReadFile(filepath.Join(data, "controller.json"))
	if err != nil {
		return fmt.Errorf("up's endpoint: %w", err)
	}
	var ep struct{ Addr, Token string }
	if err := json.Unmarshal(raw, &ep); err != nil || ep.Addr == "" {
		return fmt.Errorf("up's endpoint: %q", raw)
	}
	return fetchProfile(ep.Addr, ep.Token, what, path)
}

// saveHeap writes a node's heap profile (after a GC) to path.
func saveHeap(addr, token, path string) error {
	return fetchProfile(addr, token, "/debug/pprof/heap?gc=1", path)
}

// fetchProfile writes the profile at what from the node at addr to path.
func fetchProfile(addr, token, what, path string) error {
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	req, err := http.NewRequest(http.MethodGet, addr+what, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Transport: secure.Transport()}).Do(req)
	if err != nil {
		return fmt.Errorf("%s of %s: %w", what, addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s of %s: %s", what, addr, resp.Status)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s of %s: %w", what, addr, err)
	}
	return os.WriteFile(path, data, 0o600)
}

// sampleHeap saves up's heap profile to path whenever up's resident memory
// is the highest seen so far, until stop: the peak is mid-run, while
// universes are in flight, not at the fixed point.
func sampleHeap(pid int, data, path string, stop <-chan struct{}) {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	high := 0.0
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		rss := proc.RSS(pid)
		if rss <= high*1.02 {
			continue
		}
		if err := saveProfile(data, "/debug/pprof/heap?gc=1", path); err != nil {
			fmt.Fprintln(os.Stderr, "scale:", err)
			continue
		}
		high = rss
		fmt.Fprintf(os.Stderr, "scale: heap profile at %.0f MiB resident\n", rss)
	}
}

// fileMiB is a file's size in MiB, 0 if it cannot be read.
func fileMiB(path string) float64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return float64(fi.Size()) / (1 << 20)
}

func ints(flag, s string) []int {
	return must(proc.Counts(flag, s, 1, 0))
}

func must[T any](v T, err error) T {
	check(err)
	return v
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		if binDir != "" {
			_ = os.RemoveAll(binDir)
		}
		os.Exit(1)
	}
}
