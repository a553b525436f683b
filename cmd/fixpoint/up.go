package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/agent"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/legacy"
)

func newUpCmd() *cobra.Command {
	var (
		files          []string
		dataDir        string
		httpAddr       string
		untilConverged bool
		timeout        time.Duration
		logLevel       string
		hookTimeout    time.Duration
		tune           tuning
		logJSON        bool
		hookShell      string
		limits         limitFlags
		allowOutside   []string
		repo           string
	)
	cmd := &cobra.Command{
		Use:   "up -f ENV.cue",
		Short: "Run an environment on a one-node control plane with a local agent",
		Long: `up is the embedded default: a one-node control plane and an agent for the
machine "local" in one process. It applies ENV (only what changed since the last
run on the same --data-dir), shows units as they settle, and keeps running until
interrupted; with --until-converged it exits at the fixed point instead.
Services, relations and units the file no longer declares are removed without
asking, unlike apply: up is the development loop on its own data dir (run
fixpoint plan -f ENV.cue first to see what a run would remove).

Exit codes: 0 converged, 1 failed (bad input, ...), 3 a unit is in error,
4 the timeout passed first, 5 the fixed point except units on lost machines.`,
		Example: `  fixpoint up -f testdata/demo/env.cue --until-converged
  fixpoint up -f env/ --data-dir /var/lib/fixpoint --http 127.0.0.1:7070`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return exitf(exitFailed, "up needs an environment: -f ENV.cue (a file or a directory of .cue files)")
			}
			if err := legacy.CheckHookShell(hookShell); err != nil {
				return exitf(exitFailed, "--hook-shell: %v", err)
			}
			if err := limits.check(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runUp(ctx, upConfig{files, dataDir, httpAddr, untilConverged, timeout, logLevel, hookTimeout, tune, logJSON, hookShell, &limits, allowOutside, repo})
		},
	}
	cmd.Flags().StringSliceVarP(&files, "file", "f", nil, "environment file(s) or directory")
	cmd.Flags().StringVar(&dataDir, "data-dir", defaultDataDir, "where the control plane, charms and units keep their data")
	cmd.Flags().StringVar(&httpAddr, "http", "127.0.0.1:0", "address for the HTTP API (status, debug, agents)")
	cmd.Flags().BoolVar(&untilConverged, "until-converged", false, "exit 0 at the fixed point, non-zero on a unit error or timeout")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "with --until-converged, how long to wait for the fixed point")
	cmd.Flags().StringVar(&logLevel, "log-level", "warn", "log level: trace, debug, info, warn, error")
	cmd.Flags().BoolVar(&logJSON, "log-json", false, "log as JSON lines")
	hookTimeoutFlag(cmd.Flags(), &hookTimeout)
	hookShellFlag(cmd.Flags(), &hookShell)
	tune.flags(cmd.Flags())
	limits.flags(cmd.Flags())
	allowOutsideFlag(cmd, &allowOutside)
	repositoryFlag(cmd, &repo)
	return cmd
}

type upConfig struct {
	files          []string
	dataDir        string
	httpAddr       string
	untilConverged bool
	timeout        time.Duration
	logLevel       string
	hookTimeout    time.Duration
	tuning         tuning
	logJSON        bool
	hookShell      string
	limits         *limitFlags
	// allowOutside lets resources name files outside the environment's
	// directory (allowOutsideFlag).
	allowOutside []string
	repository   string
}

// upState is what up remembers between runs on one data dir: the Raft
// address, which is part of the replicated configuration.
type upState struct {
	RaftAddr string `json:"raft_addr"`
}

func runUp(ctx context.Context, cfg upConfig) error {
	log, err := newFilteredLogger("fixpoint", cfg.logLevel, cfg.logJSON, soloElection)
	if err != nil {
		return err
	}
	dataDir, err := filepath.Abs(cfg.dataDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return exitf(exitFailed, "data dir %s: %v", dataDir, err)
	}
	// The lock first: a second up on a busy data dir must leave the
	// running one's files alone.
	lock, err := lockDataDir(dataDir)
	if errors.Is(err, errLocked) {
		return exitf(exitFailed, "data dir %s is in use: another fixpoint up runs on it (%v); stop that one first, or pass another --data-dir", dataDir, err)
	}
	if err != nil {
		return exitf(exitFailed, "data dir %s: %v", dataDir, err)
	}
	defer lock.release()
	// A previous run's address is dead; nobody should find it meanwhile.
	endpointPath := filepath.Join(dataDir, endpointFile)
	_ = os.Remove(endpointPath)
	// Pack and check everything before starting anything: bad input
	// changes nothing.
	prep, err := prepare(cfg.files, filepath.Join(dataDir, "cache"), cfg.repository, cfg.allowOutside)
	if err != nil {
		return err
	}
	var us upState
	statePath := filepath.Join(dataDir, "up.json")
	if data, err := os.ReadFile(statePath); err == nil {
		_ = json.Unmarshal(data, &us)
	}
	if us.RaftAddr == "" {
		us.RaftAddr = "127.0.0.1:0"
	}
	creds, _, err := loadCredentials(dataDir, true)
	if err != nil {
		return exitf(exitFailed, "%v", err)
	}
	n, err := startNode(ctx, nodeConfig{id: "local", dataDir: dataDir, raftAddr: us.RaftAddr, httpAddr: cfg.httpAddr, bootstrap: true, log: log, tuning: cfg.tuning, token: creds.operator, creds: &creds, limits: cfg.limits})
	if err != nil {
		return exitf(exitFailed, "start control plane: %v", err)
	}
	defer n.stop()
	// up applies with the credentials at once: wait until they are the
	// control plane's.
	select {
	case <-n.records.Done():
	case <-ctx.Done():
		return ctx.Err()
	}
	// Until the environment is applied, status says so rather than
	// "converged" over an empty or previous environment.
	srv, _ := n.srv.Handler.(*api.Server)
	if srv != nil {
		srv.SetApplying(true)
	}
	us.RaftAddr = n.store.RaftAddr()
	if data, err := json.Marshal(us); err == nil {
		_ = os.WriteFile(statePath, data, 0o600)
	}
	// Published before the apply, so that wait and status find this run
	// at once and see "applying environment"; removed when up stops.
	if err := writeEndpoint(dataDir, endpoint{Addr: n.addr, Token: creds.operator}); err != nil {
		return exitf(exitFailed, "write %s: %v", endpointFile, err)
	}
	defer os.Remove(endpointPath)
	fmt.Printf("control plane at %s (data in %s)\n", n.addr, dataDir)
	// The token in the URL saves pasting it, but only onto a terminal:
	// redirected output ends up in logs, which must hold no secret.
	// With --until-converged the page goes when up exits: say so, or an
	// operator opens it after the fixed point and finds nothing there.
	var notes []string
	if !isTerminal(os.Stdout) {
		notes = append(notes, "it asks for the token in "+filepath.Join(dataDir, operatorTokenFile))
	}
	if cfg.untilConverged {
		notes = append(notes, "it closes when up exits at the fixed point; run up without --until-converged to keep it")
	}
	url := n.addr + "/ui/"
	if isTerminal(os.Stdout) {
		url += "#token=" + creds.operator
	}
	if len(notes) > 0 {
		url += " (" + strings.Join(notes, "; ") + ")"
	}
	fmt.Printf("dashboard at %s\n", url)

	client := api.NewClient([]string{n.addr}, creds.operator, nil)
	// up is the development loop on its own data dir: the file is what
	// runs, removals included, without asking (plan shows them first).
	if err := deploy(ctx, client, prep, false, nil); err != nil {
		return err
	}
	if srv != nil {
		srv.SetApplying(false)
	}
	agentDir := filepath.Join(dataDir, "agent")
	if err := os.MkdirAll(agentDir, 0o700); err != nil {
		return fmt.Errorf("agent data dir: %w", err)
	}
	cred, err := readAgentCredential(agentDir)
	if err != nil {
		return err
	}
	// The agent's own logger: the node ships its logger's lines as its
	// own, the agent its lines as machine local's (debuglog_node.go).
	agentLog, err := newLogger("fixpoint.agent", cfg.logLevel, cfg.logJSON)
	if err != nil {
		return err
	}
	agentCtx, stopAgent := context.WithCancel(ctx)
	agentDone := make(chan struct{})
	agentClient := api.NewClient([]string{n.addr}, creds.join, nil)
	agentClient.UseCredential(cred, func(tok string) error { return writeAgentCredential(agentDir, tok) })
	a := agent.New(agentClient, agent.Config{Machine: "local", Address: "127.0.0.1", DataDir: agentDir, HookTimeout: cfg.hookTimeout, HookShell: cfg.hookShell, Log: agentLog})
	go func() {
		defer close(agentDone)
		_ = a.Run(agentCtx)
	}()
	defer func() {
		stopAgent()
		<-agentDone
	}()
	p := &progress{w: os.Stdout}
	if !cfg.untilConverged {
		// Keep showing progress until interrupted: later operator changes
		// (apply from another shell) and retries show up here too.
		follow(ctx, client, p, false, nil)
		return nil
	}
	code, sum, err := waitConverged(ctx, client, p, cfg.timeout, false)
	if err != nil {
		return exitf(exitFailed, "%v", err)
	}
	if code == exitTimeout && ctx.Err() != nil {
		return exitf(exitInterrup, "interrupted before the fixed point")
	}
	return convergeExit(code, sum, finalTable(ctx, client, sum), cfg.timeout, false, false)
}

// soloElection leaves out the warning Raft logs when a one-node control
// plane starts: its first election is how it starts, not a lost leader,
// and a normal start logs no warning.
func soloElection(level hclog.Level, msg string, _ ...any) bool {
	return level == hclog.Warn && msg == "heartbeat timeout reached, starting election"
}
