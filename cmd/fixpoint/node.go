package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/pflag"

	"github.com/fixpoint/fixpoint/cmd/fixpoint/internal/gcidle"
	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/api/cork"
	engfleet "github.com/fixpoint/fixpoint/engine/fleet"
	"github.com/fixpoint/fixpoint/engine/memgov"
	"github.com/fixpoint/fixpoint/raftstore"
	"github.com/fixpoint/fixpoint/raftstore/forward"
)

// nodeConfig is one control-plane node, as `server` and `up` start it.
type nodeConfig struct {
	id        string
	dataDir   string
	raftAddr  string
	httpAddr  string
	bootstrap bool
	join      []string
	log       hclog.Logger
	tuning    tuning
	// token is the operator token, which nodes present to each other.
	token string
	// creds, on the bootstrap node, become the control plane's
	// credentials once it leads.
	creds *credentials
	// tls, when set, serves the API over TLS and runs Raft over mutual
	// TLS with the same certificate.
	tls *tls.Config
	// limits are the --max-* flags (recordLimits).
	limits *limitFlags
}

// tuning holds the engine settings `up` and `server` share.
type tuning struct {
	agentTTL           time.Duration
	retryMin, retryMax time.Duration
	updateStatus       time.Duration
	// httpMaxConns caps the API's connections, and httpMaxConnsPerAddr
	// those of one client address (limitAPI).
	httpMaxConns        int
	httpMaxConnsPerAddr int
	// logBudget is what each agent may add to the debug log, held by
	// the leader (raftstore.LogBudget).
	logBudget raftstore.LogBudget
	// memoryLimit is --memory-limit (memoryFlag).
	memoryLimit string
}

func (t *tuning) flags(f *pflag.FlagSet) {
	f.DurationVar(&t.agentTTL, "agent-ttl", 30*time.Second, "how long an agent may stay silent before its machine is lost and leadership moves")
	f.DurationVar(&t.retryMin, "retry-min", engine.DefaultBackoff.Min, "first wait before a failed hook is retried")
	f.DurationVar(&t.retryMax, "retry-max", engine.DefaultBackoff.Max, "longest wait between retries of a failed hook")
	f.IntVar(&t.httpMaxConns, "http-max-conns", defaultMaxConns, "most connections the HTTP API holds at once (at most half the process's open-file limit); more wait to be accepted until one closes")
	f.IntVar(&t.httpMaxConnsPerAddr, "http-max-conns-per-address", defaultMaxConnsPerAddress, "most connections the HTTP API holds at once from one client address (at most half of --http-max-conns; the cluster's own nodes are not bounded by it); more are closed as they arrive. Raise it for many agents behind one NAT address")
	d := raftstore.DefaultLogBudget
	f.IntVar(&t.logBudget.BytesPerSecond, "agent-log-bytes-per-second", d.BytesPerSecond, "most debug-log bytes one machine's agent (or one node) adds to the Raft log a second; the leader drops what is over and logs a count of it")
	f.IntVar(&t.logBudget.LinesPerSecond, "agent-log-lines-per-second", d.LinesPerSecond, "most debug-log lines one machine's agent (or one node) adds to the Raft log a second")
	f.IntVar(&t.logBudget.BatchBytes, "agent-log-batch-bytes", d.BatchBytes, "most debug-log bytes one machine's agent adds at once, after a quiet while")
	f.IntVar(&t.logBudget.BatchLines, "agent-log-batch-lines", d.BatchLines, fmt.Sprintf("most debug-log lines one machine's agent adds at once (at most %d)", d.BatchLines))
	memoryFlag(f, &t.memoryLimit)
	f.DurationVar(&t.updateStatus, "update-status-interval", engine.DefaultUpdateStatus, "how long a settled unit of an old-hook or ops charm waits after its last run before update-status runs on it, as Juju's timer does (ops retries deferred events then); 0 turns the timer off")
}

// updateStatusOption is the flag as engine.Options takes it: there a zero
// means the default, and a negative value turns the timer off.
func (t *tuning) updateStatusOption() time.Duration {
	if t.updateStatus <= 0 {
		return -1
	}
	return t.updateStatus
}

// node is a running control-plane node: the Raft store, the controller
// that follows it and the HTTP API in front of both.
type node struct {
	store *raftstore.Store
	ctl   *engine.Controller
	srv   *http.Server
	// addr is the API's URL, http:// or https://.
	addr   string
	cancel context.CancelFunc
	done   chan struct{}
	// records are the start-up records, made or still waited for;
	// recording is closed once nothing retries them any more.
	records   *startRecords
	recording chan struct{}
}

// firstRecordAttempt bounds the start-up records' first attempt, made
// before the API serves: longer than a new cluster's first election.
const firstRecordAttempt = 10 * time.Second

func startNode(ctx context.Context, cfg nodeConfig) (*node, error) {
	if cfg.tuning.httpMaxConns < 1 {
		return nil, fmt.Errorf("--http-max-conns is %d; it must be at least 1 (default %d)", cfg.tuning.httpMaxConns, defaultMaxConns)
	}
	if err := cfg.tuning.logBudget.Check(); err != nil {
		return nil, fmt.Errorf("--agent-log-*: %w", err)
	}
	if cfg.tuning.httpMaxConnsPerAddr < 1 {
		return nil, fmt.Errorf("--http-max-conns-per-address is %d; it must be at least 1 (default %d)", cfg.tuning.httpMaxConnsPerAddr, defaultMaxConnsPerAddress)
	}
	mem, err := memoryGovernor(cfg.tuning.memoryLimit, cfg.log)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.httpAddr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.httpAddr, err)
	}
	maxConns, nofile := connLimit(cfg.tuning.httpMaxConns)
	if maxConns < cfg.tuning.httpMaxConns {
		cfg.log.Warn("HTTP connections capped below --http-max-conns by the open-file limit; raise it (ulimit -n) for more", "max_conns", maxConns, "open_file_limit", nofile)
	}
	var srv http.Server
	ln, connCap := limitAPI(&srv, ln, maxConns, cfg.tuning.httpMaxConnsPerAddr)
	ln = cork.Listener{Listener: ln}
	addr := "http://" + ln.Addr().String()
	if cfg.tls != nil {
		ln = tls.NewListener(ln, apiTLS(cfg.tls))
		addr = "https://" + ln.Addr().String()
	}
	// One pooled transport for every request to another node: forwarded
	// writes, proxied agent requests, charm replication.
	transport := forward.NewTransport(cfg.tls)
	store, err := raftstore.Open(ctx, raftstore.Config{
		NodeID:    cfg.id,
		DataDir:   filepath.Join(cfg.dataDir, "raft"),
		RaftAddr:  cfg.raftAddr,
		HTTPAddr:  addr,
		Bootstrap: cfg.bootstrap,
		Join:      cfg.join,
		Logger:    cfg.log.Named("store"),
		HTTPClient: &http.Client{
			Transport: bearer{token: cfg.token, base: transport},
			Timeout:   time.Minute,
		},
		RaftTLS:   cfg.tls,
		Version:   shortVersion(),
		LogBudget: cfg.tuning.logBudget,
		Memory:    mem.Condition,
	})
	if err != nil {
		ln.Close()
		return nil, err
	}
	exemptPeers(connCap, store.PeerHosts)
	// A cluster that answers at once (a new one, a healthy restart) has
	// the records before the API serves; otherwise the node serves and
	// goes on waiting (startrecords.go).
	records := newStartRecords(store, cfg)
	records.first(ctx, firstRecordAttempt)
	runCtx, cancel := context.WithCancel(context.Background())
	recording := make(chan struct{})
	go mem.Run(runCtx, memgov.SampleEvery)
	go func() {
		defer close(recording)
		records.run(runCtx)
	}()
	shipNodeLog(runCtx, store, cfg.log)
	// One controller per environment; the default one's answers every
	// route but the agents', which the fleet serves over them all.
	fl := engfleet.New(fleetStore{store}, engine.Options{
		Log:      cfg.log.Named("engine"),
		AgentTTL: cfg.tuning.agentTTL,
		Backoff:  engine.Backoff{Min: cfg.tuning.retryMin, Max: cfg.tuning.retryMax},
		IsLeader: store.IsLeader,

		UpdateStatus: cfg.tuning.updateStatusOption(),
		// The agents' hooks run for hundreds of milliseconds after a
		// change is handed out: collect then, not in the next change.
		Served: gcidle.New(10 * time.Millisecond).Quiet,
	})
	ctl := fl.Default()
	srv.Handler = api.NewServer(api.Config{
		Node:       store,
		Controller: ctl,
		Agents:     fl,
		CharmDir:   filepath.Join(cfg.dataDir, "charms"),
		Transport:  transport,
		Peers: func(ctx context.Context) []string {
			return peerAddrs(ctx, store)
		},
		PeerClient: &http.Client{Transport: bearer{token: cfg.token, base: transport}, Timeout: 5 * time.Minute},
		Log:        cfg.log.Named("api"),
		Waiting:    records.Waiting,
		Memory:     mem,
	})
	// Long polls end with the node rather than holding shutdown up.
	srv.BaseContext = func(net.Listener) context.Context { return runCtx }
	srv.ConnContext = cork.ConnContext
	n := &node{store: store, ctl: ctl, srv: &srv, addr: addr, cancel: cancel, done: make(chan struct{}), records: records, recording: recording}
	// The controller's loops read the store, so the node is done only
	// once they have all stopped.
	stopped := fl.Start(runCtx)
	go func() {
		defer close(n.done)
		<-stopped
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			cfg.log.Error("http server stopped", "error", err)
		}
	}()
	return n, nil
}

// apiTLS is the TLS config the API is served with: conf's identity, and
// HTTP/1.1 whatever the client offers, as over plain HTTP. One request
// at a time per connection is what lets a work answer go out in one
// write (engine/api/cork) and keeps a long poll from sharing its
// connection with the answers an agent waits for.
func apiTLS(conf *tls.Config) *tls.Config {
	c := conf.Clone()
	c.NextProtos = []string{"http/1.1"}
	return c
}

// stop shuts the node down: requests and the controller first, so none
// of them sees a closed store.
func (n *node) stop() {
	n.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = n.srv.Shutdown(ctx)
	<-n.done
	<-n.recording
	_ = n.store.Close()
}

// fleetStore is the store as engine/fleet asks for it: an environment's
// view as an engine.Store.
type fleetStore struct{ *raftstore.Store }

// Env is the named environment's view ("" the default one).
func (s fleetStore) Env(name string) engine.Store { return s.Store.Env(name) }

var _ api.Agents = (*engfleet.Fleet)(nil)

// peerAddrs lists the other members' HTTP addresses.
func peerAddrs(ctx context.Context, store *raftstore.Store) []string {
	members, err := store.Members(ctx)
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range members {
		if m.ID != store.NodeID() && m.HTTPAddr != "" {
			out = append(out, m.HTTPAddr)
		}
	}
	return out
}
