// Package raftstore replicates fixpoint's model.State over hashicorp/raft:
// the FSM over model, a write-ahead log (raft-wal) as log store and
// raft-boltdb/v2 as stable store, file
// snapshots, a mutual-TLS transport on which only server certificates of
// the cluster's CA are accepted, bootstrap, join and remove over HTTP, leader
// forwarding of writes, linearizable reads and blocking watches by index.
package raftstore

import (
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
	"github.com/fixpoint/fixpoint/raftstore/forward"
	"github.com/fixpoint/fixpoint/raftstore/keyring"
)

// Errors callers can test with errors.Is.
var (
	// ErrNoLeader means no leader could be reached before the context
	// ended; the message names the nodes tried.
	ErrNoLeader = fault.ErrNoLeader
	// ErrRefused means the model refused the command (the caller's
	// mistake): it changed nothing and retrying it will not help.
	ErrRefused = fault.ErrRefused
	// ErrNotLeader means a node that does not lead was asked what only
	// the leader answers; nothing was proposed.
	ErrNotLeader = fault.ErrNotLeader
	// ErrClosed means the store was closed.
	ErrClosed = errors.New("raftstore: store closed")
)

// Defaults for the zero values of Config.
const (
	// Timeouts suited to nodes on one host: an election takes well under
	// two seconds, and they still tolerate a loaded, race-instrumented test
	// machine. Elsewhere raft's own defaults (1 s) apply.
	loopbackHeartbeat = 500 * time.Millisecond
	loopbackElection  = 500 * time.Millisecond
	// enqueueTimeout bounds waiting for room in raft's apply queue.
	enqueueTimeout = 10 * time.Second
	// barrierTimeout bounds a new leader's barrier (Nomad uses 2 minutes;
	// our state is small).
	barrierTimeout = time.Minute
	// configTimeout bounds a membership change.
	configTimeout = 30 * time.Second
	// announceInterval is how often a node checks that the cluster knows
	// its current addresses.
	announceInterval = time.Second
	logCacheSize     = 512
	snapshotsRetain  = 2
)

// Config configures one node.
type Config struct {
	// NodeID is this node's stable Raft server id.
	NodeID string
	// DataDir holds raft.db (log and stable store) and snapshots/.
	DataDir string
	// RaftAddr is the host:port to bind and advertise for Raft's TCP
	// transport; port 0 picks a free port (see Store.RaftAddr).
	RaftAddr string
	// HTTPAddr is this node's advertised HTTP address (host:port or an
	// http(s):// URL) that other nodes use to forward requests to it.
	HTTPAddr string
	// Bootstrap makes this node a one-voter cluster, only if DataDir holds
	// no Raft state yet: a node with state never bootstraps again.
	Bootstrap bool
	// Join lists HTTP addresses of existing members to join through; Open
	// tries them in turn until one succeeds or ctx ends. Ignored when the
	// node already has state: it rejoins by itself.
	Join []string
	// Logger is used for everything; raft gets it named "raft".
	Logger hclog.Logger
	// SnapshotInterval and SnapshotThreshold tune automatic snapshots;
	// zero takes raft's defaults (120 s, 8192 entries).
	SnapshotInterval  time.Duration
	SnapshotThreshold uint64
	// HTTPClient carries requests to other nodes (forwarded writes, read
	// indexes, joins). Put authentication and TLS into its Transport.
	HTTPClient *http.Client
	// RaftTLS, when set, holds this node's certificate (with the server
	// role, see IssueCert) and, as RootCAs, the CA pool peers' certificates
	// must chain to. When nil, the cluster makes its own CA at bootstrap
	// and joining nodes receive their certificates through the join. Raft
	// runs over mutual TLS either way.
	RaftTLS *tls.Config
	// HeartbeatTimeout and ElectionTimeout tune failure detection; zero
	// takes 500 ms on a loopback RaftAddr and raft's defaults (1 s)
	// otherwise.
	HeartbeatTimeout time.Duration
	ElectionTimeout  time.Duration
	// LogBudget bounds what each machine and node adds to the debug log
	// while this node leads (logbudget.go); zero takes DefaultLogBudget.
	LogBudget LogBudget
	// Memory, when set, says the node's memory condition ("" when
	// nothing is wrong, memgov.Governor.Condition): advertised with its
	// status, it reaches cluster members and the cluster's warnings.
	Memory func() string

	// trailingLogs overrides how much log survives a snapshot, and
	// walSegmentSize the size of the log's segment files, so that tests
	// can make a follower catch up by snapshot install: the WAL drops
	// compacted entries a segment at a time.
	trailingLogs   uint64
	walSegmentSize int
	// snapshotBytes and trailingBytes override snapshotFloor and
	// trailBytes (compact.go), for tests.
	snapshotBytes, trailingBytes int64
	// leaderHold overrides leaderHold, for tests.
	leaderHold time.Duration

	// Version names this node's build (module version and commit) to
	// the other servers and to status.
	Version string
	// level overrides this build's feature level, for tests of a
	// cluster of mixed builds.
	level model.Level
}

// Store is one node of the replicated state.
type Store struct {
	cfg      Config
	log      hclog.Logger
	raft     *raft.Raft
	fsm      *fsm
	logs     raft.LogStore
	bolt     *raftboltdb.BoltStore // the stable store: term and vote
	wal      *walLog
	fwd      *forward.Client
	raftAddr string
	stream   *tlsStream
	// issuer signs joining nodes' certificates; nil when the operator
	// made the certificates. joinKey is this node's key while it waits
	// for its certificate from the join.
	issuer  *issuer
	joinKey *ecdsa.PrivateKey
	// keys seal secret contents (seal.go); a joining server's is empty
	// until its join answer brings the cluster's.
	keys   *keyring.Keyring
	opened time.Time

	// contacts is, on the leader, when each silent follower last
	// answered (contact.go).
	contacts contacts
	// peers is what each server last said about its build (levels.go);
	// levelMu keeps a join from slipping between the check of the
	// servers' levels and the record of a higher cluster level.
	peers   peerLevels
	levelMu sync.Mutex
	// handingOff is set while a halted leader hands leadership over.
	handingOff atomic.Bool

	// logMeter holds each source of debug-log lines to its budget
	// while this node leads, relayMeter what it relays to a leader.
	logMeter, relayMeter *logMeter

	// readyTerm is the term whose leader barrier has completed: the
	// leader may serve linearizable reads only in that term.
	readyTerm atomic.Uint64

	// trailingMost is the TrailingLogs Raft was configured with: the
	// most entries a snapshot keeps, whatever their size (compact.go).
	trailingMost uint64

	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// Open starts a node: it opens (or creates) its data dir, starts Raft,
// bootstraps or joins as configured, and returns once the node is part of a
// cluster as far as it can tell. It does not wait for a leader.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.Default()
	}
	if cfg.LogBudget == (LogBudget{}) {
		cfg.LogBudget = DefaultLogBudget
	}
	log := cfg.Logger.With("node", cfg.NodeID)
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = defaultHTTPClient()
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("open %s: %w", cfg.DataDir, err)
	}

	dbPath := filepath.Join(cfg.DataDir, "raft.db")
	bolt, err := raftboltdb.New(raftboltdb.Options{
		Path: dbPath,
		BoltOptions: &bbolt.Options{
			// Fail instead of hanging when another process holds the file.
			Timeout: 2 * time.Second,
			// Nomad and Vault: skip writing the freelist on every commit,
			// which otherwise dominates write IO after log truncations.
			NoFreelistSync: true,
			FreelistType:   bbolt.FreelistMapType,
		},
		MsgpackUseNewTimeFormat: true,
	})
	if err != nil {
		return nil, fmt.Errorf("open %s (is another fixpoint server using this data dir?): %w", dbPath, err)
	}
	s := &Store{cfg: cfg, log: log, bolt: bolt, fwd: forward.NewClient(cfg.HTTPClient, cfg.NodeID), opened: time.Now(),
		logMeter: newLogMeter(cfg.LogBudget), relayMeter: newLogMeter(cfg.LogBudget)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	ok := false
	defer func() {
		if !ok {
			if s.raft != nil {
				_ = s.raft.Shutdown().Error()
			}
			s.cancel()
			s.wg.Wait()
			if s.wal != nil {
				_ = s.wal.Close()
			}
			_ = bolt.Close()
		}
	}()

	segment := walSegmentSize
	if cfg.walSegmentSize > 0 {
		segment = cfg.walSegmentSize
	}
	if s.wal, err = openLog(cfg.DataDir, bolt, segment, log); err != nil {
		return nil, err
	}
	s.logs, err = newLogCache(logCacheSize, logCacheBytes, s.wal)
	if err != nil {
		return nil, fmt.Errorf("log cache: %w", err)
	}
	raftLog := cfg.Logger.Named("raft").With("node", cfg.NodeID)
	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.DataDir, snapshotsRetain, raftLog)
	if err != nil {
		return nil, fmt.Errorf("snapshot store in %s: %w", cfg.DataDir, err)
	}
	trans, stream, err := newTransport(cfg.RaftAddr, raftLog)
	if err != nil {
		return nil, fmt.Errorf("raft transport on %s: %w", cfg.RaftAddr, err)
	}
	s.raftAddr, s.stream = string(trans.LocalAddr()), stream

	hasState, err := raft.HasExistingState(s.logs, bolt, snaps)
	if err != nil {
		_ = trans.Close()
		return nil, fmt.Errorf("check existing state in %s: %w", cfg.DataDir, err)
	}
	seed, err := pendingSeed(&cfg, hasState, log)
	if err != nil {
		_ = trans.Close()
		return nil, err
	}
	if !hasState && !cfg.Bootstrap && len(cfg.Join) == 0 {
		_ = trans.Close()
		return nil, fmt.Errorf("node %s has no state in %s: bootstrap a new cluster or join an existing one", cfg.NodeID, cfg.DataDir)
	}
	if err := s.setupIdentity(hasState); err != nil {
		_ = trans.Close()
		return nil, err
	}

	if s.keys, err = keyring.Open(cfg.DataDir, cfg.Bootstrap); err != nil {
		_ = trans.Close()
		return nil, err
	}
	if s.keys.Empty() && hasState {
		log.Warn("this server holds no cluster key: it can not open secrets when it leads; copy "+KeyFile+" from another server into its data dir", "dir", cfg.DataDir)
	}

	if seed != nil {
		if err := s.plantSeed(seed, snaps, trans); err != nil {
			_ = trans.Close()
			return nil, err
		}
	}

	notify := make(chan bool, 16)
	s.fsm = newFSM(log.Named("fsm"))
	s.fsm.growth = newLogGrowth(cfg.snapshotFloor())
	s.fsm.nodeID, s.fsm.build = cfg.NodeID, s.BuildLevel()
	s.fsm.setSealer(s.keys)
	s.raft, err = raft.NewRaft(s.raftConfig(raftLog, notify), s.fsm, s.logs, bolt, snaps, trans)
	if err != nil {
		_ = trans.Close()
		return nil, fmt.Errorf("start raft: %w", err)
	}
	trans.setNode(s.raft)
	s.watchContacts()
	log.Info("raft started", "raft_addr", s.raftAddr, "http_addr", cfg.HTTPAddr, "existing_state", hasState, "index", s.fsm.appliedIndex())

	s.wg.Add(4)
	go s.leadershipLoop(notify)
	go s.announceLoop()
	go s.levelLoop()
	go s.compactLoop()

	switch {
	case seed != nil:
		// The planted snapshot holds the configuration: nothing to
		// bootstrap.
		s.seedPlanted()
	case hasState:
		if cfg.Bootstrap {
			log.Info("data dir has state; not bootstrapping again")
		}
	case cfg.Bootstrap:
		boot := raft.Configuration{Servers: []raft.Server{{
			Suffrage: raft.Voter, ID: raft.ServerID(cfg.NodeID), Address: raft.ServerAddress(s.raftAddr),
		}}}
		if err := s.raft.BootstrapCluster(boot).Error(); err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
			return nil, fmt.Errorf("bootstrap: %w", err)
		}
		log.Info("bootstrapped a one-voter cluster")
	default:
		if err := s.join(ctx); err != nil {
			return nil, err
		}
	}
	ok = true
	return s, nil
}

// check reports the first missing required field.
func (c *Config) check() error {
	switch {
	case c.NodeID == "":
		return errors.New("raftstore: NodeID is required")
	case c.DataDir == "":
		return errors.New("raftstore: DataDir is required")
	case c.RaftAddr == "":
		return errors.New("raftstore: RaftAddr is required")
	case c.HTTPAddr == "":
		return errors.New("raftstore: HTTPAddr is required")
	case c.LogBudget != LogBudget{} && c.LogBudget.Check() != nil:
		return fmt.Errorf("raftstore: %w", c.LogBudget.Check())
	case c.Bootstrap && len(c.Join) > 0:
		// Which one wins on a wiped node decides between joining and
		// splitting the cluster: make the operator say.
		return errors.New("raftstore: Bootstrap and Join exclude each other: bootstrap the first node only, join the others")
	}
	return nil
}

// raftConfig derives raft's configuration from ours.
func (s *Store) raftConfig(log hclog.Logger, notify chan bool) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(s.cfg.NodeID)
	rc.Logger = log
	rc.NotifyCh = notify
	// A removed node stays up to answer reads and to be re-added; Nomad
	// and rqlite do the same.
	rc.ShutdownOnRemove = false
	// Proposals queue in a buffer while the leader loop stores the last
	// batch (an fsync), instead of each waiting for the loop by hand-off;
	// the loop takes up to MaxAppendEntries of them into the next batch.
	// Apply's enqueue timeout then no longer bounds a queued proposal; our
	// callers bound the wait with their context instead.
	rc.BatchApplyCh = true
	hb, el := s.cfg.HeartbeatTimeout, s.cfg.ElectionTimeout
	if loopback(s.raftAddr) {
		if hb == 0 {
			hb = loopbackHeartbeat
		}
		if el == 0 {
			el = loopbackElection
		}
	}
	if hb > 0 {
		rc.HeartbeatTimeout = hb
		// The lease may be as long as the heartbeat timeout; raft's 1:2
		// default made loaded test machines lose their leader over pauses
		// of a few hundred milliseconds.
		rc.LeaderLeaseTimeout = hb
	}
	if el > 0 {
		rc.ElectionTimeout = el
	}
	if s.cfg.SnapshotInterval > 0 {
		rc.SnapshotInterval = s.cfg.SnapshotInterval
	}
	if s.cfg.SnapshotThreshold > 0 {
		rc.SnapshotThreshold = s.cfg.SnapshotThreshold
		// rqlite: keep a bit more log than a snapshot covers, so a
		// follower slightly behind catches up from the log.
		if t := s.cfg.SnapshotThreshold + s.cfg.SnapshotThreshold/4; t > rc.TrailingLogs {
			rc.TrailingLogs = t
		}
	}
	if s.cfg.trailingLogs > 0 {
		rc.TrailingLogs = s.cfg.trailingLogs
	}
	s.trailingMost = rc.TrailingLogs
	return rc
}

// loopback reports whether addr's host is a loopback address.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// defaultHTTPClient bounds every node-to-node request.
func defaultHTTPClient() *http.Client {
	return &http.Client{Transport: forward.NewTransport(nil), Timeout: time.Minute}
}

// Close stops the node. It does not hand leadership over: to the cluster a
// closed leader looks like a crashed one.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		// Raft first: its shutdown unblocks sends on the notify channel
		// that leadershipLoop drains.
		err := s.raft.Shutdown().Error()
		s.cancel()
		s.wg.Wait()
		if cerr := s.wal.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close the raft log: %w", cerr)
		}
		if cerr := s.bolt.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close raft.db: %w", cerr)
		}
		s.closeErr = err
		s.log.Info("closed")
	})
	return s.closeErr
}

// Index is the index of the last applied entry, the same as the Index of
// the state View shows.
func (s *Store) Index() uint64 { return s.fsm.appliedIndex() }

// LastIndex is the index of the last entry in this node's log, applied or
// not: on the leader, the last one proposed. With Applied, it tells a
// waiter whether entries already on their way are still to land
// (engine's wake window).
func (s *Store) LastIndex() uint64 { return s.raft.LastIndex() }

// Applied reports whether this node's state reflects every entry up to
// index, counting raft's own entries (no-ops, barriers) that never reach
// the state.
func (s *Store) Applied(index uint64) bool { return s.appliedThrough(index) }

// AppliedAt is when this node applied entry index, if the entry is one of
// the last few thousand: a change's start, for measuring how long it takes
// to reach the agents (GET /v1/debug/applied).
func (s *Store) AppliedAt(index uint64) (time.Time, bool) { return s.fsm.appliedAt(index) }

// IsLeader reports whether this node is the leader now.
func (s *Store) IsLeader() bool { return s.raft.State() == raft.Leader }

// LeaderHTTP returns the HTTP address of the current leader, "" if no
// leader is known or its address is not registered yet.
func (s *Store) LeaderHTTP() string {
	_, addr := s.leader()
	return addr
}

// leader returns the current leader's id and HTTP address, as far as this
// node knows.
func (s *Store) leader() (id, httpAddr string) {
	_, lid := s.raft.LeaderWithID()
	id = string(lid)
	switch {
	case id == "":
		return "", ""
	case id == s.cfg.NodeID:
		return id, s.cfg.HTTPAddr
	}
	n, _ := s.fsm.node(id)
	return id, n.HTTPAddr
}

// LastContact is the time since this node last heard from the leader: 0 on
// the leader, and the largest duration if it never heard from one since it
// started.
func (s *Store) LastContact() time.Duration {
	if s.IsLeader() {
		return 0
	}
	t := s.raft.LastContact()
	if t.IsZero() {
		return time.Duration(math.MaxInt64)
	}
	return time.Since(t)
}

// NodeID is this node's id.
func (s *Store) NodeID() string { return s.cfg.NodeID }

// RaftAddr is the address the Raft transport is bound to and advertises.
func (s *Store) RaftAddr() string { return s.raftAddr }

// closed reports whether Close has begun.
func (s *Store) closed() bool { return s.ctx.Err() != nil }
