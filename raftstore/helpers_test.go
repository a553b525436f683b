package raftstore

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// testLogger logs through t, at the level in RAFTSTORE_TEST_LOG (default
// warn), and goes quiet once the test is over: raft's goroutines may still
// log while they wind down.
func testLogger(t testing.TB) hclog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	level := hclog.Warn
	if l := os.Getenv("RAFTSTORE_TEST_LOG"); l != "" {
		level = hclog.LevelFromString(l)
	}
	return hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: level, Output: w})
}

type testWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// node is one Store served over a real HTTP listener.
type node struct {
	t        testing.TB
	log      hclog.Logger
	id       string
	dir      string
	raftAddr string
	httpAddr string
	srv      *http.Server
	s        *Store
	trailing uint64
	segment  int           // Config.walSegmentSize
	hold     time.Duration // Config.leaderHold
	raftTLS  *tls.Config   // Config.RaftTLS
	level    model.Level   // Config.level: the build's feature level
	budget   LogBudget     // Config.LogBudget
	// snapBytes and trailBytes are Config.snapshotBytes and
	// Config.trailingBytes.
	snapBytes, trailBytes int64
	// connState, when set, sees every connection to the node's HTTP
	// server change state.
	connState func(net.Conn, http.ConnState)
}

// start opens the node's store and serves its handler. httpAddr "" picks a
// new port.
func (n *node) start(bootstrap bool, join []string) {
	n.t.Helper()
	addr := n.httpAddr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		n.t.Fatalf("listen %s: %v", addr, err)
	}
	n.httpAddr = ln.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, Config{
		NodeID:         n.id,
		DataDir:        n.dir,
		RaftAddr:       n.raftAddr,
		HTTPAddr:       n.httpAddr,
		Bootstrap:      bootstrap,
		Join:           join,
		Logger:         n.log,
		trailingLogs:   n.trailing,
		walSegmentSize: n.segment,
		leaderHold:     n.hold,
		RaftTLS:        n.raftTLS,
		level:          n.level,
		Version:        fmt.Sprintf("test-level-%d", n.level),
		LogBudget:      n.budget,
		snapshotBytes:  n.snapBytes,
		trailingBytes:  n.trailBytes,
	})
	if err != nil {
		ln.Close()
		n.t.Fatalf("open %s: %v", n.id, err)
	}
	n.s = s
	n.raftAddr = s.RaftAddr()
	n.srv = &http.Server{Handler: s.Handler(), ConnState: n.connState}
	go n.srv.Serve(ln)
}

// stop closes the node like a crash would: no leadership hand-over.
func (n *node) stop() {
	if n.s == nil {
		return
	}
	n.srv.Close()
	if err := n.s.Close(); err != nil {
		n.t.Errorf("close %s: %v", n.id, err)
	}
	n.s = nil
}

// newNode makes a node in a fresh temp dir; it is stopped at cleanup.
func newNode(t testing.TB, log hclog.Logger, id string) *node {
	n := &node{t: t, log: log, id: id, dir: t.TempDir(), raftAddr: "127.0.0.1:0"}
	t.Cleanup(n.stop)
	return n
}

// stateBytes is the JSON of a store's state.
func stateBytes(t testing.TB, s *Store) string {
	t.Helper()
	var b []byte
	err := s.View(func(st *model.State) (err error) {
		b, err = json.Marshal(st)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// machines returns the machine names and addresses of a store's state.
func machines(s *Store) map[string]string {
	out := map[string]string{}
	_ = s.View(func(st *model.State) error {
		for name, m := range st.Machines {
			out[name] = m.Address
		}
		return nil
	})
	return out
}

func machineCmd(name, addr string) *model.Command {
	return &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: name, Address: addr}}
}

// deployCmd deploys one db service of a tiny charm.
func deployCmd() *model.Command {
	meta := model.CharmMeta{Name: "db", Provides: map[string]model.Endpoint{"db": {Interface: "sql"}}}
	return &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{
		Env: model.Environment{
			APIVersion: "fixpoint/v1",
			Name:       "test",
			Services:   map[string]model.ServiceSpec{"db": {Charm: "./db", CharmHash: "h1"}},
		},
		Charms: map[string]*model.Charm{"h1": {Hash: "h1", Meta: meta}},
	}}
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// leaderOf returns the one node that leads, or an error if none or more
// than one do.
func leaderOf(nodes ...*node) (*node, error) {
	var leaders []*node
	for _, n := range nodes {
		if n.s != nil && n.s.IsLeader() {
			leaders = append(leaders, n)
		}
	}
	if len(leaders) != 1 {
		return nil, fmt.Errorf("%d leaders", len(leaders))
	}
	return leaders[0], nil
}

// converged reports an error unless all running nodes hold the same
// environments at the same index.
func converged(t testing.TB, nodes ...*node) error {
	var first *node
	for _, n := range nodes {
		if n.s == nil {
			continue
		}
		if first == nil {
			first = n
			continue
		}
		if a, b := first.s.Index(), n.s.Index(); a != b {
			return fmt.Errorf("%s at index %d, %s at %d", first.id, a, n.id, b)
		}
		if clusterBytes(t, first.s) != clusterBytes(t, n.s) {
			return fmt.Errorf("%s and %s differ at index %d", first.id, n.id, n.s.Index())
		}
	}
	return nil
}

// waitLeader waits until exactly one of the nodes leads and every running
// one knows it, and returns it. Tests look the leader up again after
// anything slow: on a loaded machine leadership may move at any time.
func waitLeader(t testing.TB, nodes ...*node) *node {
	t.Helper()
	var l *node
	rafttest.Eventually(t, time.Minute, "one leader that all know", func() (err error) {
		if l, err = leaderOf(nodes...); err != nil {
			return err
		}
		for _, n := range nodes {
			if n.s == nil {
				continue
			}
			if _, id := n.s.raft.LeaderWithID(); string(id) != l.id {
				return fmt.Errorf("%s follows %q, not %s", n.id, id, l.id)
			}
			if n.s.LeaderHTTP() == "" {
				return fmt.Errorf("%s knows no leader address", n.id)
			}
		}
		return nil
	})
	return l
}

// settled waits until a one-node cluster leads and has registered its own
// addresses and recorded its feature level: those entries are written in
// the background after an election, and would otherwise land in the
// middle of a test that counts indexes.
func settled(t testing.TB, n *node) {
	t.Helper()
	rafttest.Eventually(t, time.Minute, n.id+" registered", func() error {
		if !n.s.IsLeader() {
			return fmt.Errorf("%s does not lead", n.id)
		}
		if r, _ := n.s.fsm.node(n.id); r.HTTPAddr != n.httpAddr || r.RaftAddr != n.s.RaftAddr() {
			return fmt.Errorf("registry has %+v", r)
		}
		if got, want := n.s.fsm.clusterLevel(), n.s.BuildLevel(); got != want {
			return fmt.Errorf("cluster level %d, not yet %d", got, want)
		}
		return nil
	})
}
