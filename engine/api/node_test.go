package api_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/api/cork"
	"github.com/fixpoint/fixpoint/engine/api/cork/corktest"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore"
	"github.com/fixpoint/fixpoint/raftstore/forward"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// The tokens every test node is bootstrapped with.
const (
	operatorToken = "operator-token-for-tests"
	joinToken     = "join-token-for-tests"
)

// testNode is one control-plane node as `fixpoint server` runs it: a real
// raftstore.Store, its controller and the API served over loopback HTTP.
type testNode struct {
	id    string
	addr  string // http://host:port
	store *raftstore.Store
	ctl   *engine.Controller
	srv   *http.Server
	// charms is the node's directory of charm archives.
	charms string
	// writes are the writes made on the node's HTTP connections, as
	// seen beneath its corkable listener.
	writes *writeLog
	// warns is what the node logs at warn level and above.
	warns *lineLog
}

// lineLog keeps the lines a node logs.
type lineLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.TrimSpace(string(p)))
	return len(p), nil
}

// find returns the first line holding want, "" if none does.
func (l *lineLog) find(want string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, want) {
			return line
		}
	}
	return ""
}

// bearer adds the operator token to every request, as nodes do.
type bearer struct{ base http.RoundTripper }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+operatorToken)
	return b.base.RoundTrip(r)
}

// startNode starts node id, bootstrapping a cluster or joining the nodes
// at join; it stops when the test ends.
func startNode(t *testing.T, id string, join ...string) *testNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + ln.Addr().String()
	// As `fixpoint server` listens: corkable connections, whose writes
	// the test can see.
	writes := &writeLog{}
	ln = cork.Listener{Listener: corktest.Listener{Listener: ln, Wrote: writes.note}}
	transport := forward.NewTransport(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	warns := &lineLog{}
	log := hclog.New(&hclog.LoggerOptions{Name: id, Level: hclog.Warn, Output: io.MultiWriter(newTestWriter(t), warns)})
	store, err := raftstore.Open(ctx, raftstore.Config{
		NodeID: id, DataDir: t.TempDir(), RaftAddr: "127.0.0.1:0", HTTPAddr: addr,
		Bootstrap: len(join) == 0, Join: join, Logger: log.Named("store"),
		HTTPClient: &http.Client{Transport: bearer{transport}, Timeout: time.Minute},
	})
	if err != nil {
		ln.Close()
		t.Fatalf("open %s: %v", id, err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	ctl := engine.NewController(store, engine.Options{Log: log.Named("engine"), IsLeader: store.IsLeader})
	n := &testNode{id: id, addr: addr, store: store, ctl: ctl, charms: t.TempDir(), writes: writes, warns: warns}
	n.srv = &http.Server{
		Handler: api.NewServer(api.Config{
			Node: store, Controller: ctl, CharmDir: n.charms, Transport: transport,
			PeerClient: &http.Client{Transport: bearer{transport}, Timeout: time.Minute},
			Log:        log.Named("api"),
		}),
		BaseContext: func(net.Listener) context.Context { return runCtx },
		ConnContext: cork.ConnContext,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ctl.Run(runCtx)
	}()
	go func() { _ = n.srv.Serve(ln) }()
	t.Cleanup(func() {
		stop()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = n.srv.Shutdown(ctx)
		<-done
		_ = store.Close()
	})
	if len(join) == 0 {
		rafttest.Eventually(t, time.Minute, id+" leads", func() error {
			if !store.IsLeader() {
				return errors.New("not leader yet")
			}
			return nil
		})
		_, err := store.Apply(ctxT(t), &model.Command{Op: model.OpAuth,
			Auth: &model.Auth{Operator: api.HashToken(operatorToken), Join: api.HashToken(joinToken)}})
		if err != nil {
			t.Fatalf("record credentials: %v", err)
		}
		// A server alone raises its level when it leads; a test that
		// compares states must not see the raise land in between.
		rafttest.Eventually(t, time.Minute, id+" at this build's level", func() error {
			if l := store.ClusterLevel().Level; l < model.BuildLevel {
				return fmt.Errorf("cluster level %d", l)
			}
			return nil
		})
	}
	return n
}

// cluster starts a leader and a follower that knows it.
func cluster(t *testing.T) (leader, follower *testNode) {
	t.Helper()
	leader = startNode(t, "n1")
	follower = startNode(t, "n2", leader.addr)
	rafttest.Eventually(t, time.Minute, "n2 follows n1 and has its credentials", func() error {
		if follower.store.LeaderHTTP() != leader.addr {
			return fmt.Errorf("n2 takes %q for the leader", follower.store.LeaderHTTP())
		}
		return follower.store.View(func(st *model.State) error {
			if st.Auth == nil {
				return errors.New("no credentials yet")
			}
			return nil
		})
	})
	if !leader.store.IsLeader() {
		t.Skip("leadership moved while the cluster formed")
	}
	return leader, follower
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// testWriter logs through t until the test ends: raft's goroutines may
// still log while they wind down.
type testWriter struct {
	t    *testing.T
	mu   *sync.Mutex
	done *bool
}

func newTestWriter(t *testing.T) testWriter {
	w := testWriter{t: t, mu: &sync.Mutex{}, done: new(bool)}
	t.Cleanup(func() {
		w.mu.Lock()
		*w.done = true
		w.mu.Unlock()
	})
	return w
}

func (w testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !*w.done {
		w.t.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}
