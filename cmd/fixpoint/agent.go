package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
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
	"github.com/fixpoint/fixpoint/model"
)

func newAgentCmd() *cobra.Command {
	var (
		controller  string
		machine     string
		dataDir     string
		address     string
		concurrency int
		hookTimeout time.Duration
		hookShell   string
		logLevel    string
		logJSON     bool
		token       string
		tokenFile   string
		labelFlags  []string
		tlsf        tlsFlags
	)
	cmd := &cobra.Command{
		Use:   "agent --controller ADDR[,ADDR] --machine NAME --data-dir D",
		Short: "Run the hooks of the units placed on this machine",
		Long: `agent registers its machine with the control plane, long-polls it for the
stale units placed here, runs their hooks with bounded concurrency and posts
the results. It follows leader changes and node failures across every given
address. Its data dir keeps the machine credential it got when it first
registered (agent.token, 0600): restarted with --controller naming other
servers (a control plane restored from a backup, a replaced server), it
carries on with it. An agent whose data dir was wiped downloads its charms
again and registers with the join token once 'fixpoint machine reset NAME'
has dropped the old credential.`,
		Example: `  fixpoint agent --controller 10.0.0.1:7070,10.0.0.2:7070 --machine m1 --data-dir /var/lib/fixpoint-agent`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := legacy.CheckHookShell(hookShell); err != nil {
				return exitf(exitFailed, "--hook-shell: %v", err)
			}
			if controller == "" {
				controller = os.Getenv("FIXPOINT_ADDR")
			}
			if controller == "" || machine == "" || dataDir == "" {
				return exitf(exitFailed, "agent needs --controller (or $FIXPOINT_ADDR), --machine and --data-dir")
			}
			labels, err := parseLabels(labelFlags)
			if err != nil {
				return exitf(exitFailed, "--label: %v", err)
			}
			addrs := strings.Split(controller, ",")
			if address == "" {
				address = outboundAddress(addrs[0])
			}
			// An intercept logger: the agent ships its lines to the debug log.
			log := hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: "agent", Level: hclog.LevelFromString(logLevel), JSONFormat: logJSON, Output: os.Stderr})
			abs, err := filepath.Abs(dataDir)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(abs, 0o700); err != nil {
				return exitf(exitFailed, "data dir: %v", err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			token, err := tokenFrom(token, tokenFile)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			if token == "" {
				return exitf(exitFailed, "agent needs the join token to register its machine: pass --token-file (or set FIXPOINT_TOKEN)")
			}
			hc, err := tlsf.httpClient()
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			client := api.NewClient(addrs, token, hc)
			cred, err := readAgentCredential(abs)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			client.UseCredential(cred, func(tok string) error { return writeAgentCredential(abs, tok) })
			client.SetLabels(labels)
			log.Info("agent starting", "machine", machine, "address", address, "controllers", addrs, "labels", labels)
			a := agent.New(client, agent.Config{Machine: machine, Address: address, DataDir: abs, Concurrency: concurrency, HookTimeout: hookTimeout, HookShell: hookShell, Log: log})
			return a.Run(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&controller, "controller", "", "control-plane address(es), comma-separated (default $FIXPOINT_ADDR)")
	f.StringVar(&machine, "machine", "", "this machine's name, as placement lists it")
	f.StringVar(&dataDir, "data-dir", "", "where charms are unpacked and units keep their files")
	f.StringVar(&address, "address", "", "this machine's address, its units' private-address (default: the address that reaches the controller)")
	f.IntVar(&concurrency, "concurrency", agent.DefaultConcurrency(), "hooks that may run at once; the default is two per CPU")
	hookTimeoutFlag(f, &hookTimeout)
	hookShellFlag(f, &hookShell)
	f.StringVar(&logLevel, "log-level", "info", "log level: trace, debug, info, warn, error")
	f.BoolVar(&logJSON, "log-json", false, "log as JSON lines")
	f.StringVar(&token, "token", "", "join token, to register this machine (default $FIXPOINT_TOKEN); shows in ps, prefer --token-file")
	f.StringVar(&tokenFile, "token-file", "", "file holding the join token, readable by its owner only")
	f.StringArrayVar(&labelFlags, "label", nil, "a label of this machine, KEY=VALUE (repeatable, at most 16), which an environment's placement: {labels: ...} selects; each registration replaces the machine's labels")
	tlsf.flags(f)
	return cmd
}

// parseLabels reads --label KEY=VALUE flags, refusing a malformed one, a
// key given twice and more than model.MaxLabels.
func parseLabels(flags []string) (map[string]string, error) {
	if len(flags) > model.MaxLabels {
		return nil, fmt.Errorf("%d labels; at most %d are allowed", len(flags), model.MaxLabels)
	}
	labels := map[string]string{}
	for _, f := range flags {
		k, v, err := model.ParseLabel(f)
		if err != nil {
			return nil, err
		}
		if _, dup := labels[k]; dup {
			return nil, fmt.Errorf("label %s is given twice; give each key once", k)
		}
		labels[k] = v
	}
	if len(labels) == 0 {
		return nil, nil
	}
	return labels, nil
}

// outboundAddress is the local address used to reach the controller: the
// one other machines can reach this one on, as far as we can tell.
func outboundAddress(controller string) string {
	host := controller
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	if !strings.Contains(host, ":") {
		host += ":80"
	}
	conn, err := net.Dial("udp", host)
	if err != nil {
		return "127.0.0.1"
	}
	defer conn.Close()
	if a, ok := conn.LocalAddr().(*net.UDPAddr); ok {
		return a.IP.String()
	}
	return fmt.Sprint(conn.LocalAddr())
}

// readAgentCredential returns the machine credential kept in dataDir, or
// "" when there is none yet.
func readAgentCredential(dataDir string) (string, error) {
	path := filepath.Join(dataDir, model.AgentCredentialFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the machine credential: %w", err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s is readable by others (mode %v): it is this machine's credential; chmod 600 it", path, fi.Mode().Perm())
	}
	return strings.TrimSpace(string(data)), nil
}

// writeAgentCredential keeps the machine credential in dataDir, mode 0600,
// replacing the old one atomically.
func writeAgentCredential(dataDir, token string) error {
	f, err := os.CreateTemp(dataDir, ".agent-token-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), filepath.Join(dataDir, model.AgentCredentialFile))
}
