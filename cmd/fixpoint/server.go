package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

func newServerCmd() *cobra.Command {
	var (
		cfg       nodeConfig
		join      string
		logLevel  string
		logJSON   bool
		token     string
		tokenFile string
		tlsf      tlsFlags
		limits    limitFlags
	)
	cmd := &cobra.Command{
		Use:   "server --node-id ID --data-dir D --raft-addr HOST:PORT --http-addr HOST:PORT (--bootstrap | --join ADDR[,ADDR])",
		Short: "Run one control-plane node",
		Long: `server runs one node of the control plane: Raft over TCP, its data in
--data-dir, and the HTTP API. Start the first node with --bootstrap (it only
bootstraps an empty data dir) and the others with --join pointing at any
member's HTTP address. A node restarted on its data dir rejoins by itself.

The --max-* flags bound what the environment may hold (units, services,
relations, config, machines). The limits are the cluster's, not the node's:
the bootstrap node records its own, and a node started later with some of
them given changes those for the whole cluster.`,
		Example: `  fixpoint server --node-id n1 --data-dir /var/lib/fixpoint/n1 --raft-addr 10.0.0.1:7000 --http-addr 10.0.0.1:7070 --bootstrap
  fixpoint server --node-id n2 --data-dir /var/lib/fixpoint/n2 --raft-addr 10.0.0.2:7000 --http-addr 10.0.0.2:7070 --join 10.0.0.1:7070 --token-file /etc/fixpoint/operator.token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.id == "" || cfg.dataDir == "" || cfg.raftAddr == "" || cfg.httpAddr == "" {
				return exitf(exitFailed, "server needs --node-id, --data-dir, --raft-addr and --http-addr")
			}
			if err := limits.check(); err != nil {
				return err
			}
			cfg.limits = &limits
			if cfg.bootstrap && join != "" {
				return exitf(exitFailed, "--bootstrap and --join exclude each other: bootstrap the first node only, join the others to it")
			}
			for _, a := range strings.Split(join, ",") {
				if a = strings.TrimSpace(a); a != "" {
					cfg.join = append(cfg.join, a)
				}
			}
			var err error
			if cfg.log, err = newLogger("fixpoint", logLevel, logJSON); err != nil {
				return err
			}
			if err := os.MkdirAll(cfg.dataDir, 0o700); err != nil {
				return exitf(exitFailed, "data dir: %v", err)
			}
			if cfg.bootstrap {
				creds, created, err := loadCredentials(cfg.dataDir, true)
				if err != nil {
					return exitf(exitFailed, "%v", err)
				}
				if created {
					fmt.Printf("operator token: %s\njoin token:     %s\n(kept in %s; shown only this once)\n", creds.operator, creds.join, cfg.dataDir)
				}
				cfg.token, cfg.creds = creds.operator, &creds
			} else {
				given, err := tokenFrom(token, tokenFile)
				if err != nil {
					return exitf(exitFailed, "%v", err)
				}
				cfg.token = firstNonEmpty(given, readToken(cfg.dataDir))
				if cfg.token == "" {
					return exitf(exitFailed, "joining needs the operator token: pass --token-file (or set FIXPOINT_TOKEN); the bootstrap node printed it and keeps it in its data dir's %s", operatorTokenFile)
				}
				if err := os.WriteFile(filepath.Join(cfg.dataDir, operatorTokenFile), []byte(cfg.token+"\n"), 0o600); err != nil {
					return exitf(exitFailed, "keep the token: %v", err)
				}
			}
			conf, err := tlsf.config(true)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			cfg.tls = conf
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			n, err := startNode(ctx, cfg)
			if err != nil {
				return exitf(exitFailed, "start node %s: %v", cfg.id, err)
			}
			defer n.stop()
			if err := writeEndpoint(cfg.dataDir, endpoint{Addr: n.addr, Token: cfg.token, CA: absPath(tlsf.ca)}); err != nil {
				return exitf(exitFailed, "write %s: %v", endpointFile, err)
			}
			cfg.log.Info("node serving", "id", cfg.id, "http", n.addr, "raft", n.store.RaftAddr())
			<-ctx.Done()
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.id, "node-id", "", "this node's unique, stable id")
	f.StringVar(&cfg.dataDir, "data-dir", "", "where the node keeps its raft log (wal/), raft.db, snapshots and charms")
	f.StringVar(&cfg.raftAddr, "raft-addr", "", "host:port for Raft traffic (bind and advertise)")
	f.StringVar(&cfg.httpAddr, "http-addr", "", "host:port for the HTTP API")
	f.BoolVar(&cfg.bootstrap, "bootstrap", false, "bootstrap a new cluster with this node, from the backup 'cluster restore --new-cluster' staged in the data dir if any (ignored when the data dir has state)")
	f.StringVar(&join, "join", "", "HTTP address(es) of existing members to join through, comma-separated")
	f.StringVar(&token, "token", "", "operator token, to join (default $FIXPOINT_TOKEN, then the data dir's); shows in ps, prefer --token-file")
	f.StringVar(&tokenFile, "token-file", "", "file holding the operator token, readable by its owner only")
	f.StringVar(&logLevel, "log-level", "info", "log level: trace, debug, info, warn, error")
	f.BoolVar(&logJSON, "log-json", false, "log as JSON lines")
	cfg.tuning.flags(f)
	tlsf.flags(f)
	limits.flags(f)
	return cmd
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

// readToken returns the operator token kept in a data dir, or "".
func readToken(dataDir string) string {
	b, err := os.ReadFile(filepath.Join(dataDir, operatorTokenFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func absPath(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
