package raftstore

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// The linearizability test: clients read and write a few registers through
// random nodes of a three-node cluster (real Raft over TCP, forwarding and
// read indexes over HTTP, all on 127.0.0.1) while a nemesis crashes nodes,
// mostly the leader, and restarts them from their data dirs. The history,
// with operations whose outcome is unknown (a write that timed out or
// failed after it was sent), is checked with porcupine.
//
// A register is a machine's address: writes are OpMachine commands,
// reads are Linearize followed by View.
//
// By default a handful of seeds within about a minute; more with -long or
// FIXPOINT_LINEARIZABLE_LONG=1 (seeds and duration tunable with
// FIXPOINT_LINEARIZABLE_SEEDS and FIXPOINT_LINEARIZABLE_RUN).

var longLinearizable = flag.Bool("long", false, "run the linearizability test with many more seeds")

// linOp is the input of one operation on a register.
type linOp struct {
	Key   string
	Write bool
	Value string
}

// linOut is its output; Unknown marks a write whose fate the client never
// learned.
type linOut struct {
	Value   string
	Unknown bool
}

// registerModel is a map of registers, partitioned by key: each key is
// checked on its own, which keeps porcupine's search small. A register
// starts as "" (no such machine).
var registerModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := op.Input.(linOp).Key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		sort.Strings(keys)
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		in, out := input.(linOp), output.(linOut)
		if in.Write {
			// A write that may or may not have happened returns at the
			// end of time: linearizing it last is the same as it never
			// happening, so "always succeeds" covers both.
			return true, in.Value
		}
		return out.Value == state.(string), state
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(linOp), output.(linOut)
		switch {
		case in.Write && out.Unknown:
			return fmt.Sprintf("put(%s, %s) -> ?", in.Key, in.Value)
		case in.Write:
			return fmt.Sprintf("put(%s, %s)", in.Key, in.Value)
		}
		return fmt.Sprintf("get(%s) -> %q", in.Key, out.Value)
	},
	DescribeState: func(state any) string { return fmt.Sprintf("%q", state) },
}

// linSettings are the knobs of one run.
type linSettings struct {
	seeds   int
	run     time.Duration // how long clients and nemesis run per seed
	budget  time.Duration // stop starting seeds after this (0: no limit)
	clients int
	keys    int
}

func linearizableSettings() linSettings {
	s := linSettings{seeds: 8, run: 3 * time.Second, budget: 60 * time.Second, clients: 6, keys: 3}
	if testing.Short() {
		s.seeds, s.budget = 2, 20*time.Second
	}
	if *longLinearizable || os.Getenv("FIXPOINT_LINEARIZABLE_LONG") != "" {
		s.seeds, s.run, s.budget, s.clients = 100, 8*time.Second, 0, 8
	}
	if v, err := strconv.Atoi(os.Getenv("FIXPOINT_LINEARIZABLE_SEEDS")); err == nil && v > 0 {
		s.seeds, s.budget = v, 0
	}
	if v, err := time.ParseDuration(os.Getenv("FIXPOINT_LINEARIZABLE_RUN")); err == nil && v > 0 {
		s.run = v
	}
	return s
}

func TestLinearizable(t *testing.T) {
	set := linearizableSettings()
	start := time.Now()
	base := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("FIXPOINT_LINEARIZABLE_SEED"), 10, 64); err == nil {
		base, set.seeds = v, 1
	}
	ran := 0
	for i := 0; i < set.seeds; i++ {
		if set.budget > 0 && ran >= 2 && time.Since(start) > set.budget {
			t.Logf("stopping after %d seeds: the %s budget is spent (-long runs more)", ran, set.budget)
			break
		}
		seed := base + uint64(i)
		ok := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { linearizableRun(t, seed, set) })
		ran++
		if !ok {
			t.Logf("rerun this seed's schedule with FIXPOINT_LINEARIZABLE_SEED=%d (timing differs, so it may not repeat)", seed)
			break
		}
	}
}

// linNode is one member of the cluster under test. The nemesis swaps its
// store while clients use it, hence the lock.
type linNode struct {
	id       string
	dir      string
	raftAddr string
	httpAddr string

	mu  sync.RWMutex
	s   *Store
	srv *http.Server
	// restores counts snapshot installs and restores of stores closed
	// so far, to show the run exercised them.
	restores uint64
}

func (n *linNode) store() *Store {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.s
}

// open starts the node from its data dir. It reuses the node's ports; if
// another socket took one meanwhile it picks a new one, which the cluster
// learns through the node's announcements.
func (n *linNode) open(log hclog.Logger, bootstrap bool, join []string) error {
	ln, err := net.Listen("tcp", n.httpAddr)
	if err != nil {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := Config{
		NodeID:    n.id,
		DataDir:   n.dir,
		RaftAddr:  n.raftAddr,
		HTTPAddr:  ln.Addr().String(),
		Bootstrap: bootstrap,
		Join:      join,
		Logger:    log,
		// Snapshot often and keep little log, so that restarted nodes
		// also catch up by snapshot install.
		SnapshotInterval:  200 * time.Millisecond,
		SnapshotThreshold: 32,
		trailingLogs:      16,
	}
	s, err := Open(ctx, cfg)
	if err != nil && strings.Contains(err.Error(), "address already in use") {
		cfg.RaftAddr = "127.0.0.1:0"
		s, err = Open(ctx, cfg)
	}
	if err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{Handler: s.Handler()}
	go srv.Serve(ln)
	n.mu.Lock()
	n.s, n.srv = s, srv
	n.httpAddr, n.raftAddr = ln.Addr().String(), s.RaftAddr()
	n.mu.Unlock()
	return nil
}

// crash stops the node as a crash would: no hand-over. Reports whether it
// was running.
func (n *linNode) crash() bool {
	n.mu.Lock()
	s, srv := n.s, n.srv
	n.s, n.srv = nil, nil
	n.mu.Unlock()
	if s == nil {
		return false
	}
	srv.Close()
	_ = s.Close()
	n.mu.Lock()
	n.restores += s.fsm.restores.Load()
	n.mu.Unlock()
	return true
}

// history collects operations from every client.
type history struct {
	mu    sync.Mutex
	ops   []porcupine.Operation
	t0    time.Time
	next  int // next client id
	stats struct{ writes, reads, unknown, failedReads int }
}

func (h *history) now() int64 { return int64(time.Since(h.t0)) }

func (h *history) clientID() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	return h.next - 1
}

func (h *history) add(op porcupine.Operation) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, op)
}

func linearizableRun(t *testing.T, seed uint64, set linSettings) {
	log := testLogger(t)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	nodes := make([]*linNode, 3)
	for i := range nodes {
		nodes[i] = &linNode{id: fmt.Sprintf("n%d", i+1), dir: t.TempDir(), raftAddr: "127.0.0.1:0", httpAddr: "127.0.0.1:0"}
		n := nodes[i]
		t.Cleanup(func() { n.crash() })
	}
	if err := nodes[0].open(log, true, nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes[1:] {
		if err := n.open(log, false, []string{nodes[0].httpAddr}); err != nil {
			t.Fatal(err)
		}
	}
	linWaitHealthy(t, nodes, 30*time.Second)

	h := &history{t0: time.Now()}
	keys := make([]string, set.keys)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}

	ctx, cancel := context.WithTimeout(context.Background(), set.run)
	defer cancel()
	var wg sync.WaitGroup
	for c := 0; c < set.clients; c++ {
		crng := rand.New(rand.NewPCG(seed, uint64(c)+1))
		wg.Add(1)
		go func() {
			defer wg.Done()
			linClient(ctx, h, nodes, keys, crng, c)
		}()
	}
	kills := linNemesis(ctx, t, log, nodes, rng)
	wg.Wait()

	// Bring everyone back, let them agree, and read every key on every
	// node: the final reads pin down the writes whose fate was unknown.
	for _, n := range nodes {
		if n.store() == nil {
			if err := n.open(log, false, nil); err != nil {
				t.Fatalf("restart %s: %v", n.id, err)
			}
		}
	}
	linWaitHealthy(t, nodes, 60*time.Second)
	for _, n := range nodes {
		for _, k := range keys {
			rctx, rcancel := context.WithTimeout(context.Background(), time.Minute)
			call := h.now()
			v, err := linRead(rctx, n.store(), k)
			ret := h.now()
			rcancel()
			if err != nil {
				t.Fatalf("final read of %s on %s: %v", k, n.id, err)
			}
			h.add(porcupine.Operation{ClientId: h.clientID(), Input: linOp{Key: k}, Call: call, Output: linOut{Value: v}, Return: ret})
		}
	}
	rafttest.Eventually(t, time.Minute, "replicas agree", func() error {
		var first string
		for i, n := range nodes {
			b := stateBytes(t, n.store())
			if i == 0 {
				first = b
			} else if b != first {
				return fmt.Errorf("%s's state differs from %s's at index %d/%d", n.id, nodes[0].id, n.store().Index(), nodes[0].store().Index())
			}
		}
		return nil
	})

	// Unknown writes return after everything else.
	end := h.now() + 1
	for i := range h.ops {
		if h.ops[i].Return == math.MaxInt64 {
			h.ops[i].Return = end
		}
	}
	restores := uint64(0)
	for _, n := range nodes {
		n.mu.RLock()
		restores += n.restores + n.s.fsm.restores.Load()
		n.mu.RUnlock()
	}
	t.Logf("%d writes (%d of unknown outcome), %d reads (%d more failed and are left out), %d crashes, %d snapshot restores, %d clients",
		h.stats.writes, h.stats.unknown, h.stats.reads, h.stats.failedReads, kills, restores, set.clients)
	res, info := porcupine.CheckOperationsVerbose(registerModel, h.ops, 30*time.Second)
	switch res {
	case porcupine.Ok:
	case porcupine.Illegal:
		f, err := os.CreateTemp("", "fixpoint-linearizable-*.html")
		if err == nil {
			_ = porcupine.Visualize(registerModel, info, f)
			f.Close()
			t.Errorf("history of seed %d is not linearizable; visualization in %s", seed, f.Name())
		} else {
			t.Errorf("history of seed %d is not linearizable (no visualization: %v)", seed, err)
		}
	default:
		t.Errorf("porcupine could not decide within 30s (%d operations): make runs shorter", len(h.ops))
	}
	if h.stats.writes-h.stats.unknown == 0 || h.stats.reads == 0 {
		t.Errorf("the run did no acknowledged writes or no reads: the check proves nothing")
	}
}

// linClient issues operations one at a time until ctx ends.
func linClient(ctx context.Context, h *history, nodes []*linNode, keys []string, rng *rand.Rand, c int) {
	id := h.clientID()
	for seq := 0; ctx.Err() == nil; seq++ {
		n := nodes[rng.IntN(len(nodes))]
		key := keys[rng.IntN(len(keys))]
		s := n.store()
		if s == nil {
			// Crashed: clients of a real cluster would pick another node.
			continue
		}
		opCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if rng.IntN(2) == 0 {
			v := fmt.Sprintf("10.%d.%d.%d", c, seq/250, seq%250)
			call := h.now()
			_, err := s.Apply(opCtx, machineCmd(key, v))
			ret := h.now()
			out := linOut{}
			if err != nil {
				// Sent, maybe applied: it may take effect at any time
				// from its call on, or never.
				out.Unknown, ret = true, math.MaxInt64
			}
			h.add(porcupine.Operation{ClientId: id, Input: linOp{Key: key, Write: true, Value: v}, Call: call, Output: out, Return: ret})
			h.mu.Lock()
			h.stats.writes++
			if err != nil {
				h.stats.unknown++
			}
			h.mu.Unlock()
			if err != nil {
				// This client's operation never ends: go on as another.
				id = h.clientID()
			}
		} else {
			call := h.now()
			v, err := linRead(opCtx, s, key)
			ret := h.now()
			h.mu.Lock()
			if err != nil {
				// A failed read has no effect: leave it out.
				h.stats.failedReads++
			} else {
				h.stats.reads++
				h.ops = append(h.ops, porcupine.Operation{ClientId: id, Input: linOp{Key: key}, Call: call, Output: linOut{Value: v}, Return: ret})
			}
			h.mu.Unlock()
		}
		cancel()
	}
}

// linRead is a linearizable read of a register.
func linRead(ctx context.Context, s *Store, key string) (string, error) {
	if s == nil {
		return "", ErrClosed
	}
	if err := s.Linearize(ctx); err != nil {
		return "", err
	}
	var v string
	err := s.View(func(st *model.State) error {
		if m := st.Machines[key]; m != nil {
			v = m.Address
		}
		return nil
	})
	return v, err
}

// linNemesis crashes a node (mostly the leader) and restarts it from its
// data dir, over and over, until ctx ends. Now and then it crashes a
// second node as well, so that the cluster loses its quorum for a moment.
// It returns how many crashes it caused.
func linNemesis(ctx context.Context, t *testing.T, log hclog.Logger, nodes []*linNode, rng *rand.Rand) int {
	pause := func(min, spread time.Duration) bool {
		tm := time.NewTimer(min + time.Duration(rng.Int64N(int64(spread))))
		defer tm.Stop()
		select {
		case <-tm.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
	kills := 0
	for pause(200*time.Millisecond, 500*time.Millisecond) {
		var down []*linNode
		victim := nodes[rng.IntN(len(nodes))]
		if rng.IntN(4) != 0 {
			for _, n := range nodes {
				if s := n.store(); s != nil && s.IsLeader() {
					victim = n
				}
			}
		}
		if victim.crash() {
			down = append(down, victim)
		}
		if rng.IntN(6) == 0 {
			if other := nodes[rng.IntN(len(nodes))]; other.crash() {
				down = append(down, other)
			}
		}
		kills += len(down)
		pause(100*time.Millisecond, 800*time.Millisecond)
		for _, n := range down {
			if err := n.open(log, false, nil); err != nil {
				t.Errorf("restart %s: %v", n.id, err)
				return kills
			}
		}
	}
	return kills
}

// linWaitHealthy waits until every node runs, one leads, all know it and
// its address, and all three are voters.
func linWaitHealthy(t *testing.T, nodes []*linNode, within time.Duration) {
	t.Helper()
	rafttest.Eventually(t, within, "a healthy three-node cluster", func() error {
		leaders := 0
		for _, n := range nodes {
			s := n.store()
			if s == nil {
				return fmt.Errorf("%s is down", n.id)
			}
			if s.IsLeader() {
				leaders++
			}
			if s.LeaderHTTP() == "" {
				return fmt.Errorf("%s knows no leader address", n.id)
			}
			f := s.raft.GetConfiguration()
			if err := f.Error(); err != nil {
				return err
			}
			if got := len(f.Configuration().Servers); got != 3 {
				return fmt.Errorf("%s sees %d servers", n.id, got)
			}
		}
		if leaders != 1 {
			return fmt.Errorf("%d leaders", leaders)
		}
		return nil
	})
}
