// Command raftbench measures replicated writes on a three-node loopback
// cluster of raftstore.Stores: real Raft over mutual TLS on 127.0.0.1, raft-boltdb
// with fsync on, the HTTP handlers for joins and forwarding, all in one
// process.
//
// At each level of concurrent writers (1, 16, 64, 256 by default) every
// writer sends commands one after another for -duration, after -warmup.
// A write is acknowledged when Store.Apply returns: the entry is committed
// by a majority and applied by the leader's state machine. It prints the
// acknowledged writes per second, the p50/p99/max of that commit latency,
// and how raft batched them: how many entries each fsync carried on the
// leader (raft.leader.dispatchNumLogs: one StoreLogs, one bbolt commit, one
// fsync per dispatch) and on the followers (entries received per
// raft.rpc.appendEntries.storeLogs), and how long a StoreLogs took
// (raft.boltdb.storeLogs). These come from raft's and raft-boltdb's
// go-metrics, caught by an in-process sink. Its last line is one JSON
// object with the last level's figures.
//
// Each command re-registers one of eight machines under a new address:
// the state keeps its size, so the figures measure replication rather than
// the model.
//
//	go run ./bench/raftbench                         # writes to the leader
//	go run ./bench/raftbench -via follower           # through a follower (HTTP forward)
//	go run ./bench/raftbench -writers 1,4 -duration 10s -dir /mnt/disk
//	go run ./bench/raftbench -v -cpuprofile cpu.out   # every raft metric, and where the CPU went
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics/compat"
	"golang.org/x/sys/unix"

	"github.com/fixpoint/fixpoint/bench/internal/proc"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore"
)

func main() {
	var (
		writersFlag = flag.String("writers", "1,16,64,256", "concurrent writer counts, comma-separated")
		duration    = flag.Duration("duration", 5*time.Second, "measured time per level")
		warmup      = flag.Duration("warmup", time.Second, "unmeasured time before each level")
		via         = flag.String("via", "leader", "send writes to the leader, or to a follower that forwards them")
		dir         = flag.String("dir", "", "where the nodes keep their data (default: a new temporary directory)")
		logLevel    = flag.String("log-level", "error", "raft and raftstore log level")
		cpuprofile  = flag.String("cpuprofile", "", "write a CPU profile of the measured runs to this file")
		verbose     = flag.Bool("v", false, "also print every raft metric of each level (count, mean; timings in µs) to stderr")
	)
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fail("%v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail("%v", err)
		}
		defer pprof.StopCPUProfile()
	}
	levels, err := proc.Counts("writers", *writersFlag, 1, 0)
	if err != nil {
		fail("%v", err)
	}
	if *via != "leader" && *via != "follower" {
		fail("-via is leader or follower")
	}
	root := *dir
	if root == "" {
		var err error
		if root, err = os.MkdirTemp("", "raftbench-"); err != nil {
			fail("%v", err)
		}
		defer os.RemoveAll(root)
	}

	sink := newSink()
	cfg := metrics.DefaultConfig("")
	cfg.EnableHostname, cfg.EnableRuntimeMetrics, cfg.EnableServiceLabel = false, false, false
	cfg.TimerGranularity = time.Microsecond
	if _, err := metrics.NewGlobal(cfg, sink); err != nil {
		fail("metrics: %v", err)
	}

	fsync := measureFsync(root)
	log := hclog.New(&hclog.LoggerOptions{Name: "raftbench", Level: hclog.LevelFromString(*logLevel), Output: os.Stderr})
	nodes, err := startCluster(root, log)
	if err != nil {
		fail("start cluster: %v", err)
	}
	defer func() {
		for _, n := range nodes {
			n.close()
		}
	}()
	target := leaderOf(nodes)
	if *via == "follower" {
		for _, n := range nodes {
			if n != target {
				target = n
				break
			}
		}
	}

	fmt.Printf("raftbench: 3 nodes on 127.0.0.1, data in %s, writes to %s (%s), %s per level after %s warm-up\n",
		root, target.id, *via, *duration, *warmup)
	fmt.Printf("disk: 4 KiB write+fdatasync p50 %s, p99 %s (%d samples)\n\n", fmtDur(fsync.p50), fmtDur(fsync.p99), fsync.n)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "writers\twrites/s\tp50\tp99\tmax\tleader fsyncs\tentries/leader fsync\tentries/follower fsync\tStoreLogs mean\terrors\t")
	var seq atomic.Int64
	var last result
	for _, w := range levels {
		run(target, w, *warmup, &seq) // warm up: fill the pipeline, settle batching
		before := sink.snapshot()
		r := run(target, w, *duration, &seq)
		d := sink.snapshot().minus(before)
		lead := d.get("raft.leader.dispatchNumLogs")
		fstore := d.get("raft.rpc.appendEntries.storeLogs")
		fentries := d.get("raft.replication.appendEntries.logs")
		store := d.get("raft.boltdb.storeLogs")
		perFollower := math.NaN()
		if fstore.n > 0 {
			perFollower = fentries.sum / float64(fstore.n)
		}
		fmt.Fprintf(tw, "%d\t%.0f\t%s\t%s\t%s\t%d\t%.1f\t%.1f\t%s\t%d\t\n",
			w, float64(r.ok)/r.elapsed.Seconds(), fmtDur(r.p50), fmtDur(r.p99), fmtDur(r.max),
			lead.n, lead.mean(), perFollower, fmtDur(time.Duration(store.mean()*float64(time.Microsecond))), r.errors)
		last, last.writers = r, w
		if *verbose {
			var keys []string
			for k := range d {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if d[k].n > 0 {
					fmt.Fprintf(os.Stderr, "  %-55s n=%-7d mean=%.1f\n", k, d[k].n, d[k].mean())
				}
			}
		}
	}
	tw.Flush()
	fmt.Println("\nwrites/s: acknowledged Apply calls per second; p50/p99/max: their latency as the writer saw it.")
	fmt.Println("entries/leader fsync: commands per leader StoreLogs (one bbolt commit, one fsync); follower: entries per AppendEntries StoreLogs.")
	line, _ := json.Marshal(map[string]any{
		"bench": "raftbench", "writers": last.writers, "via": *via,
		"writes_per_s": math.Round(float64(last.ok) / last.elapsed.Seconds()),
		"p50_ms":       msec(last.p50), "p99_ms": msec(last.p99), "errors": last.errors,
	})
	fmt.Println(string(line))
}

// msec is d in milliseconds, to two decimals.
func msec(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Millisecond)*100) / 100
}

// result is one level's outcome.
type result struct {
	writers       int
	ok, errors    int
	elapsed       time.Duration
	p50, p99, max time.Duration
}

// run has w writers apply commands through n for d.
func run(n *node, w int, d time.Duration, seq *atomic.Int64) result {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	lat := make([][]time.Duration, w)
	errs := make([]int, w)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < w; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for ctx.Err() == nil {
				c := cmd(seq.Add(1))
				t0 := time.Now()
				// Each write gets its own generous deadline: the level's
				// end must not cut a write short and count it as failed.
				actx, acancel := context.WithTimeout(context.Background(), 30*time.Second)
				_, err := n.s.Apply(actx, c)
				acancel()
				if err != nil {
					errs[i]++
					continue
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		}(i)
	}
	wg.Wait()
	r := result{elapsed: time.Since(start)}
	var all []time.Duration
	for i := range lat {
		all = append(all, lat[i]...)
		r.errors += errs[i]
	}
	r.ok = len(all)
	if len(all) > 0 {
		sort.Slice(all, func(a, b int) bool { return all[a] < all[b] })
		r.p50, r.p99, r.max = quantile(all, 0.50), quantile(all, 0.99), all[len(all)-1]
	}
	return r
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// cmd re-registers one of eight machines under a new address.
func cmd(i int64) *model.Command {
	return &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{
		Name:    fmt.Sprintf("m%d", i%8),
		Address: fmt.Sprintf("10.%d.%d.%d", i/62500%250, i/250%250, i%250),
	}}
}

// node is one Store with its HTTP handler served.
type node struct {
	id, addr string
	s        *raftstore.Store
	srv      *http.Server
}

func (n *node) close() {
	_ = n.srv.Close()
	_ = n.s.Close()
}

func startNode(root, id string, bootstrap bool, join []string, log hclog.Logger) (*node, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := raftstore.Open(ctx, raftstore.Config{
		NodeID:    id,
		DataDir:   filepath.Join(root, id),
		RaftAddr:  "127.0.0.1:0",
		HTTPAddr:  ln.Addr().String(),
		Bootstrap: bootstrap,
		Join:      join,
		Logger:    log,
	})
	if err != nil {
		ln.Close()
		return nil, err
	}
	srv := &http.Server{Handler: s.Handler()}
	go srv.Serve(ln)
	return &node{id: id, addr: ln.Addr().String(), s: s, srv: srv}, nil
}

// startCluster starts three nodes and waits until each knows the leader.
func startCluster(root string, log hclog.Logger) ([]*node, error) {
	var nodes []*node
	n1, err := startNode(root, "n1", true, nil, log)
	if err != nil {
		return nil, err
	}
	nodes = append(nodes, n1)
	deadline := time.Now().Add(time.Minute)
	for n1.s.LeaderHTTP() == "" {
		if time.Now().After(deadline) {
			return nodes, errors.New("n1 never led")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, id := range []string{"n2", "n3"} {
		n, err := startNode(root, id, false, []string{n1.addr}, log)
		if err != nil {
			return nodes, err
		}
		nodes = append(nodes, n)
	}
	for {
		known := 0
		for _, n := range nodes {
			if n.s.LeaderHTTP() != "" {
				known++
			}
		}
		ms, err := n1.s.Members(context.Background())
		voters := 0
		for _, m := range ms {
			if m.Voter && m.Role != "unknown" {
				voters++
			}
		}
		if err == nil && known == 3 && voters == 3 && leaderOf(nodes) != nil {
			return nodes, nil
		}
		if time.Now().After(deadline) {
			return nodes, fmt.Errorf("no healthy cluster within a minute: %d know the leader, %d voters", known, voters)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func leaderOf(nodes []*node) *node {
	for _, n := range nodes {
		if n.s.IsLeader() {
			return n
		}
	}
	return nil
}

// fsyncStats is the disk's own sync latency, for scale.
type fsyncStats struct {
	n        int
	p50, p99 time.Duration
}

// measureFsync times 4 KiB appends each followed by fdatasync, as bbolt
// does per commit, in dir.
func measureFsync(dir string) fsyncStats {
	f, err := os.CreateTemp(dir, "fsync-")
	if err != nil {
		return fsyncStats{}
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, 4096)
	var ds []time.Duration
	for i := 0; i < 200; i++ {
		t0 := time.Now()
		if _, err := f.Write(buf); err != nil {
			return fsyncStats{}
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			return fsyncStats{}
		}
		ds = append(ds, time.Since(t0))
	}
	sort.Slice(ds, func(a, b int) bool { return ds[a] < ds[b] })
	return fsyncStats{n: len(ds), p50: quantile(ds, 0.5), p99: quantile(ds, 0.99)}
}

func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	default:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "raftbench: "+format+"\n", args...)
	os.Exit(1)
}

// sink is a go-metrics sink that keeps, per key, how many values came in
// and their sum: gauges and samples alike (raft reports batch sizes as
// gauges), counters by their increments.
type sink struct {
	mu   sync.Mutex
	vals map[string]stat
}

type stat struct {
	n   int
	sum float64
}

func (s stat) mean() float64 {
	if s.n == 0 {
		return math.NaN()
	}
	return s.sum / float64(s.n)
}

type snapshot map[string]stat

func newSink() *sink { return &sink{vals: map[string]stat{}} }

func (s *sink) add(key []string, val float32) {
	k := strings.Join(key, ".")
	s.mu.Lock()
	st := s.vals[k]
	st.n++
	st.sum += float64(val)
	s.vals[k] = st
	s.mu.Unlock()
}

func (s *sink) snapshot() snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(snapshot, len(s.vals))
	for k, v := range s.vals {
		out[k] = v
	}
	return out
}

func (a snapshot) minus(b snapshot) snapshot {
	out := make(snapshot, len(a))
	for k, v := range a {
		out[k] = stat{n: v.n - b[k].n, sum: v.sum - b[k].sum}
	}
	return out
}

func (a snapshot) get(key string) stat { return a[key] }

func (s *sink) SetGauge(key []string, val float32) { s.add(key, val) }
func (s *sink) SetGaugeWithLabels(key []string, val float32, _ []metrics.Label) {
	s.add(key, val)
}
func (s *sink) EmitKey([]string, float32)             {}
func (s *sink) IncrCounter(key []string, val float32) { s.add(key, val) }
func (s *sink) IncrCounterWithLabels(key []string, val float32, _ []metrics.Label) {
	s.add(key, val)
}
func (s *sink) AddSample(key []string, val float32) { s.add(key, val) }
func (s *sink) AddSampleWithLabels(key []string, val float32, _ []metrics.Label) {
	s.add(key, val)
}
