// Command apibench measures replicated writes through fixpoint's real HTTP
// API: three `fixpoint server` processes on 127.0.0.1 (Raft over TCP,
// raft-boltdb with fsync, the API with its authentication), and N writers
// each sending one request after another to the leader or to a follower,
// which forwards it to the leader. It is the fixpoint side of a
// side-by-side run with etcd's own benchmark tool.
//
// A write is POST /v1/agent/register with an agent's credential: the
// agent of one of eight machines renews its registration under a new
// address (a Raft entry that keeps the state's size, as bench/raftbench's
// command does). The bench registers the eight machines with the operator
// token first and keeps the credentials the server hands out. Through
// a follower it takes the leader-only path: the follower's API proxies it
// to the leader over the node-to-node pool. A write counts when its 200
// arrives: committed by a majority and applied by the leader.
//
// It prints a table per writer count and, as its last line, one JSON
// object for the last count:
//
//	{"bench":"apibench","writers":64,"via":"follower","writes_per_s":…,"p50_ms":…,"p99_ms":…,
//	 "writes_per_batch":…,"cpu_us_per_write":{"leader n1":…,"follower n2":…,"bench":…},"cpu_us_per_write_all":…}
//
//	go run ./bench/apibench                              # 1, 16 and 64 writers via the leader
//	go run ./bench/apibench -via follower -writers 64 -duration 20s
//	go run ./bench/apibench -bin ./fixpoint              # a binary built beforehand
//	go run ./bench/apibench -writers 64 -cpuprofile leader.prof   # the leader's CPU during the last level
//	go run ./bench/apibench -writers 64 -profiles DIR             # every server's and the bench's
//	go run ./bench/apibench -tls                                   # the API over HTTPS, as README's production setup
//	go run ./bench/apibench -client nethttp                        # writers on net/http's client, as the bench had before
//
// For the last level it also prints each process's CPU time per
// acknowledged write (user + system from /proc, the bench's own included),
// which says where a write's cost goes on a box the processes share.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/fixpoint/fixpoint/bench/internal/benchtls"
	"github.com/fixpoint/fixpoint/bench/internal/proc"
	"github.com/fixpoint/fixpoint/bench/internal/servers"
)

func main() {
	var (
		bin         = flag.String("bin", "", "the fixpoint binary (default: build ./cmd/fixpoint into a temporary directory)")
		writersFlag = flag.String("writers", "1,16,64", "concurrent writer counts, comma-separated; the JSON line reports the last")
		via         = flag.String("via", "leader", "send writes to the leader, or to a follower that forwards them")
		duration    = flag.Duration("duration", 10*time.Second, "measured time per level")
		warmup      = flag.Duration("warmup", 2*time.Second, "unmeasured time before each level")
		dir         = flag.String("dir", "", "where the servers keep their data (default: a new temporary directory)")
		cpuprofile  = flag.String("cpuprofile", "", "write the leader's CPU profile during the last level's measured time to this file")
		client      = flag.String("client", "raw", "how writers send: raw (one write per request on a keep-alive connection, net/http's parser for the answer) or nethttp (net/http's client, as the bench had before)")
		useTLS      = flag.Bool("tls", false, "serve the API over HTTPS with certificates from `fixpoint tls`, as README's production setup, the writers trusting its CA")
		profiles    = flag.String("profiles", "", "write every server's CPU profile (leader.prof, follower-ID.prof) and the bench's (bench.prof) during the last level's measured time into this directory")
	)
	flag.Parse()
	levels, err := proc.Counts("writers", *writersFlag, 1, 0)
	if err != nil {
		fail("%v", err)
	}
	if *via != "leader" && *via != "follower" {
		fail("-via is leader or follower, not %q", *via)
	}
	root := *dir
	if root == "" {
		var err error
		if root, err = os.MkdirTemp("", "apibench-"); err != nil {
			fail("%v", err)
		}
	}
	if *bin == "" {
		*bin = filepath.Join(root, "fixpoint")
		build := exec.Command("go", "build", "-o", *bin, "./cmd/fixpoint")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			os.RemoveAll(root)
			fail("build ./cmd/fixpoint (run from the repository root, or pass -bin): %v", err)
		}
	}

	if *useTLS {
		if secure, err = benchtls.Make(*bin, filepath.Join(root, "tls"), "n1", "n2", "n3"); err != nil {
			fail("%v", err)
		}
		plane = &http.Client{Transport: secure.Transport()}
	}
	c, err := startCluster(*bin, root)
	if err == nil {
		err = measure(c, levels, *via, *client, root, *duration, *warmup, profileSet{leader: *cpuprofile, dir: *profiles})
	}
	c.Stop()
	if *dir == "" {
		os.RemoveAll(root)
	}
	if err != nil {
		fail("%v", err)
	}
}

// secure is the cluster's CA and certificates with -tls, nil without;
// plane is the client of the bench's own requests to the servers.
var (
	secure *benchtls.Set
	plane  = http.DefaultClient
)

// profileSet says which CPU profiles to take during the last level.
type profileSet struct {
	leader string // the leader's, to this file
	dir    string // every server's and the bench's, into this directory
}

// measure runs the levels against the leader or a follower of c and
// prints the table, each process's CPU per write and the JSON line.
func measure(c *cluster, levels []int, via, kind, root string, duration, warmup time.Duration, profiles profileSet) error {
	target, err := c.Pick(via)
	if err != nil {
		return err
	}
	leader, err := c.Pick("leader")
	if err != nil {
		return err
	}
	agents, err := registerAgents(c, leader.Addr, 8)
	if err != nil {
		return err
	}
	if err := ready(target.Addr, agents); err != nil {
		return err
	}

	fmt.Printf("apibench: 3 fixpoint server processes on 127.0.0.1, data in %s, writes to %s (%s) at %s, %s per level after %s warm-up, %s client\n\n",
		root, target.ID, via, target.Addr, duration, warmup, kind)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "writers\twrites/s\tp50\tp99\tmax\twrites/batch\terrors\t")
	var seq atomic.Int64
	var last result
	var cpu []processCPU
	for i, w := range levels {
		run(target.Addr, agents, w, warmup, &seq, kind)
		lastLevel := i == len(levels)-1
		var stopProfiles func() error
		if lastLevel {
			if stopProfiles, err = startProfiles(c, leader, duration, profiles); err != nil {
				return err
			}
		}
		before, batches0 := cpuOf(c, leader), fsmBatches(leader.Addr)
		r := run(target.Addr, agents, w, duration, &seq, kind)
		after, batches1 := cpuOf(c, leader), fsmBatches(leader.Addr)
		if stopProfiles != nil {
			if err := stopProfiles(); err != nil {
				return err
			}
		}
		if batches1 > batches0 {
			r.perBatch = float64(r.ok) / (batches1 - batches0)
		}
		fmt.Fprintf(tw, "%d\t%.0f\t%s\t%s\t%s\t%.1f\t%d\t\n", w, r.rate(), ms(r.p50), ms(r.p99), ms(r.max), r.perBatch, r.errors)
		last = r
		last.writers = w
		if lastLevel {
			cpu = cpuPerWrite(before, after, r.ok)
		}
	}
	tw.Flush()
	if last.firstErr != "" {
		fmt.Printf("\nfirst error: %s\n", last.firstErr)
	}
	fmt.Println("\nwrites/s: 200 answers per second to POST /v1/agent/register; p50/p99/max: their latency as the writer saw it.")
	fmt.Println("writes/batch: writes per batch the leader's state machine applied (fixpoint_raft_fsm_apply_seconds_count), about the entries per leader fsync.")
	fmt.Printf("\nCPU during the last level (%d writers), user + system:\n", last.writers)
	tw = tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "process\tCPU s\tcores\tµs/write\t")
	perWrite := map[string]float64{}
	total := 0.0
	for _, p := range cpu {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.0f\t\n", p.name, p.seconds, p.seconds/last.elapsed.Seconds(), p.perWrite)
		perWrite[p.name] = math.Round(p.perWrite)
		total += p.perWrite
	}
	fmt.Fprintf(tw, "all\t\t\t%.0f\t\n", total)
	tw.Flush()
	if profiles.leader != "" {
		fmt.Printf("leader CPU profile of the last level: %s\n", profiles.leader)
	}
	if profiles.dir != "" {
		fmt.Printf("CPU profiles of the last level: %s\n", profiles.dir)
	}
	line, _ := json.Marshal(map[string]any{
		"bench": "apibench", "writers": last.writers, "via": via, "client": kind, "tls": secure != nil,
		"writes_per_s": math.Round(last.rate()), "p50_ms": round2(last.p50), "p99_ms": round2(last.p99),
		"errors": last.errors, "seconds": duration.Seconds(), "writes_per_batch": math.Round(last.perBatch*10) / 10,
		"cpu_us_per_write": perWrite, "cpu_us_per_write_all": math.Round(total),
	})
	fmt.Println(string(line))
	return nil
}

// fsmBatches reads how many batches the node at addr has applied, from
// its public /metrics; 0 when it cannot be read.
func fsmBatches(addr string) float64 {
	resp, err := plane.Get(addr + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "fixpoint_raft_fsm_apply_seconds_count "); ok {
			n, _ := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return n
		}
	}
	return 0
}

// processCPU is one process's CPU time over a level.
type processCPU struct {
	name     string
	seconds  float64
	perWrite float64 // microseconds per acknowledged write
}

// cpuOf reads the CPU seconds so far of the leader, the followers (named
// by role and id) and the bench itself, in that order.
func cpuOf(c *cluster, leader *server) []processCPU {
	t, _ := proc.CPU(leader.Cmd.Process.Pid)
	out := []processCPU{{name: "leader " + leader.ID, seconds: t}}
	for _, s := range c.Servers {
		if s != leader {
			t, _ := proc.CPU(s.Cmd.Process.Pid)
			out = append(out, processCPU{name: "follower " + s.ID, seconds: t})
		}
	}
	self, _ := proc.CPU(os.Getpid())
	return append(out, processCPU{name: "bench", seconds: self})
}

// cpuPerWrite is each process's CPU between before and after, and per
// write of the writes acknowledged meanwhile.
func cpuPerWrite(before, after []processCPU, writes int) []processCPU {
	out := make([]processCPU, len(after))
	for i := range after {
		out[i] = processCPU{name: after[i].name, seconds: after[i].seconds - before[i].seconds}
		if writes > 0 {
			out[i].perWrite = out[i].seconds * 1e6 / float64(writes)
		}
	}
	return out
}

// startProfiles starts the CPU profiles ps asks for, over d, and returns
// what waits for them to be written.
func startProfiles(c *cluster, leader *server, d time.Duration, ps profileSet) (func() error, error) {
	type job struct {
		addr, path string
	}
	var jobs []job
	if ps.leader != "" {
		jobs = append(jobs, job{leader.Addr, ps.leader})
	}
	var self *os.File
	if ps.dir != "" {
		if err := os.MkdirAll(ps.dir, 0o755); err != nil {
			return nil, err
		}
		for _, s := range c.Servers {
			name := "follower-" + s.ID + ".prof"
			if s == leader {
				name = "leader.prof"
			}
			jobs = append(jobs, job{s.Addr, filepath.Join(ps.dir, name)})
		}
		var err error
		if self, err = os.Create(filepath.Join(ps.dir, "bench.prof")); err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(self); err != nil {
			self.Close()
			return nil, fmt.Errorf("bench CPU profile: %w", err)
		}
	}
	errs := make(chan error, len(jobs))
	for _, j := range jobs {
		go func() { errs <- cpuProfile(c, j.addr, d, j.path) }()
	}
	return func() error {
		var first error
		for range jobs {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		if self != nil {
			pprof.StopCPUProfile()
			if err := self.Close(); err != nil && first == nil {
				first = err
			}
		}
		return first
	}, nil
}

// result is one level's outcome.
type result struct {
	writers       int
	ok, errors    int
	perBatch      float64 // writes per batch the leader's FSM applied
	firstErr      string
	elapsed       time.Duration
	p50, p99, max time.Duration
}

func (r result) rate() float64 { return float64(r.ok) / r.elapsed.Seconds() }

// agent is a registered machine and the credential that renews it.
type agent struct{ machine, token string }

// registerAgents registers n machines with the operator token and returns
// their credentials: only a machine's own credential renews it.
func registerAgents(c *cluster, addr string, n int) ([]agent, error) {
	var out []agent
	for i := range n {
		a := agent{machine: fmt.Sprintf("m%d", i)}
		body := fmt.Sprintf(`{"machine":%q,"address":"10.255.0.%d"}`, a.machine, i)
		data, err := post(plane, addr+"/v1/agent/register", c.Token, body)
		if err != nil {
			return nil, fmt.Errorf("register %s: %w", a.machine, err)
		}
		var reg struct {
			Token string `json:"token"`
		}
		if err := json.Unmarshal(data, &reg); err != nil || reg.Token == "" {
			return nil, fmt.Errorf("register %s: no credential in %q", a.machine, data)
		}
		a.token = reg.Token
		out = append(out, a)
	}
	return out, nil
}

// ready waits until every agent's renewal succeeds through addr: a
// follower knows a credential only once it applied the registration.
func ready(addr string, agents []agent) error {
	deadline := time.Now().Add(30 * time.Second)
	for i, a := range agents {
		for {
			err := write(plane, addr, a, int64(i))
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s renewing through %s: %w", a.machine, addr, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

// cpuProfile writes the CPU profile of the node at addr over d to path.
func cpuProfile(c *cluster, addr string, d time.Duration, path string) error {
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", addr, int(d.Seconds())), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	resp, err := plane.Do(req)
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("cpu profile: %s: %s", resp.Status, bytes.TrimSpace(data))
	}
	return os.WriteFile(path, data, 0o644)
}

// run has w writers post registrations to addr for d, writer i renewing
// agents[i%len(agents)].
func run(addr string, agents []agent, w int, d time.Duration, seq *atomic.Int64, kind string) result {
	// One pool for all writers, large enough that none of them dials for
	// a request: the bench measures the servers, not the client's pool.
	tr := secure.Transport()
	tr.MaxIdleConnsPerHost = w
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	defer tr.CloseIdleConnections()
	senders := make([]sender, w)
	for i := range senders {
		s, err := newSender(kind, addr, client)
		if err != nil {
			return result{errors: 1, firstErr: err.Error(), elapsed: time.Nanosecond}
		}
		senders[i] = s
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	lat := make([][]time.Duration, w)
	errs := make([]int, w)
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for i := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer senders[i].close()
			for ctx.Err() == nil {
				t0 := time.Now()
				if err := senders[i].write(agents[i%len(agents)], seq.Add(1)); err != nil {
					errs[i]++
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	r := result{elapsed: time.Since(start)}
	if s, ok := firstErr.Load().(string); ok {
		r.firstErr = s
	}
	var all []time.Duration
	for i := range lat {
		all = append(all, lat[i]...)
		r.errors += errs[i]
	}
	r.ok = len(all)
	if len(all) > 0 {
		slices.Sort(all)
		r.p50, r.p99, r.max = quantile(all, 0.50), quantile(all, 0.99), all[len(all)-1]
	}
	return r
}

// write renews a's registration under a new address through net/http.
func write(client *http.Client, addr string, a agent, i int64) error {
	_, err := post(client, addr+"/v1/agent/register", a.token, string(body(nil, a, i)))
	return err
}

// post sends one JSON body with token and returns the 200 answer.
func post(client *http.Client, url, token, body string) ([]byte, error) {
	return servers.Do(client, http.MethodPost, url, token, body)
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }

func round2(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Millisecond)*100) / 100
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "apibench: "+format+"\n", args...)
	os.Exit(1)
}
