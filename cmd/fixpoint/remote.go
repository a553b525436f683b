package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fixpoint/fixpoint/engine/api"
)

// remote holds the flags every command that talks to a control plane has.
type remote struct {
	controller string
	dataDir    string
	token      string
	tokenFile  string
	tls        tlsFlags
	// reveal asks for secret values instead of their redactions
	// (revealFlag adds --reveal to the commands that show them).
	reveal bool
	// context names a saved context (fixpoint login).
	context string
	// fs is the command's flags: an explicit --data-dir beats the
	// current context.
	fs         *pflag.FlagSet
	dataDirSet bool
	// env is -e/--env, and envScoped says the command has it: its
	// client is then the environment's (envflag.go).
	env       string
	envScoped bool
}

// remoteEnvHelp ends the help of every command that talks to a control
// plane: where the address and token come from when no flag gives them.
const remoteEnvHelp = `

Environment:
  FIXPOINT_ADDR     control-plane address(es), as --controller
  FIXPOINT_TOKEN    operator token, as --token
  FIXPOINT_CA       CA certificate of an HTTPS control plane, as --tls-ca
  FIXPOINT_CONTEXT  saved context to use, as --context
Flags come first, then these, then the saved context (--context, or the
last fixpoint login), then what the fixpoint up (or server) running on
--data-dir wrote there. An explicit --data-dir is used rather than the
current context.`

func (r *remote) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&r.controller, "controller", "", "control-plane address(es), host:port or URL, comma-separated (default $FIXPOINT_ADDR, or the address fixpoint up wrote to --data-dir)")
	cmd.Flags().StringVar(&r.dataDir, "data-dir", defaultDataDir, "data directory of a running fixpoint up, to find its address and token")
	cmd.Flags().StringVar(&r.token, "token", "", "operator token (default $FIXPOINT_TOKEN, or the one in --data-dir); shows in ps, prefer --token-file")
	cmd.Flags().StringVar(&r.tokenFile, "token-file", "", "file holding the operator token, such as the operator.token in a data dir")
	cmd.Flags().StringVar(&r.tls.ca, "tls-ca", "", "CA certificate (PEM) the control plane's certificate must chain to (default: the one up or server wrote to --data-dir)")
	cmd.Flags().StringVar(&r.tls.cert, "tls-cert", "", "client certificate (PEM), if the control plane asks for one")
	cmd.Flags().StringVar(&r.tls.key, "tls-key", "", "its private key (PEM)")
	cmd.Flags().StringVar(&r.context, "context", "", "saved context to use (default $FIXPOINT_CONTEXT, or the last fixpoint login); see fixpoint login")
	r.fs = cmd.Flags()
	long := cmd.Long
	if long == "" {
		long = cmd.Short + "."
	}
	cmd.Long = strings.TrimRight(long, "\n") + remoteEnvHelp
}

const defaultDataDir = ".fixpoint"

// endpointFile is where `up` and `server` write how to reach them.
const endpointFile = "controller.json"

// endpoint is the content of endpointFile.
type endpoint struct {
	Addr  string `json:"addr"`
	Token string `json:"token,omitempty"`
	// CA is the CA certificate file when the API speaks TLS.
	CA string `json:"ca,omitempty"`
}

func writeEndpoint(dataDir string, e endpoint) error {
	data, _ := json.MarshalIndent(e, "", "  ")
	tmp := filepath.Join(dataDir, endpointFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dataDir, endpointFile))
}

// errStarting: an up holds the data dir but has not published its
// address yet.
var errStarting = errors.New("starting")

// errNoUp: the data dir names no address that answers and no up holds
// it: none runs, or one is about to start (`up ... & wait`).
var errNoUp = errors.New("no up running")

// client finds the control plane: --controller, $FIXPOINT_ADDR, the saved
// context, then the data dir; the token: --token, --token-file,
// $FIXPOINT_TOKEN, the context, then the data dir; and the CA: --tls-ca,
// $FIXPOINT_CA, the context, then the data dir.
func (r *remote) client() (*api.Client, error) {
	addrs := r.controller
	if addrs == "" {
		addrs = os.Getenv("FIXPOINT_ADDR")
	}
	token, err := r.flagToken()
	if err != nil {
		return nil, err
	}
	caFrom := "--tls-ca"
	if r.tls.ca == "" {
		r.tls.ca, caFrom = os.Getenv("FIXPOINT_CA"), "$FIXPOINT_CA"
	}
	r.dataDirSet = r.fs != nil && r.fs.Changed("data-dir")
	sc, scFrom, err := r.chosenContext(addrs != "")
	if err != nil {
		return nil, exitf(exitFailed, "%v", err)
	}
	if sc != nil {
		if addrs == "" {
			addrs = strings.Join(sc.Addrs, ",")
		}
		if token == "" {
			token = sc.Token
		}
		if r.tls.ca == "" && sc.CA != "" {
			r.tls.ca, caFrom = sc.CA, scFrom
		}
	}
	fromDir := false
	if sc == nil && (addrs == "" || token == "" || r.tls.ca == "") {
		data, err := os.ReadFile(filepath.Join(r.dataDir, endpointFile))
		if err == nil {
			var e endpoint
			if json.Unmarshal(data, &e) == nil {
				if addrs == "" {
					addrs, fromDir = e.Addr, true
				}
				if token == "" {
					token = e.Token
				}
				if r.tls.ca == "" && e.CA != "" {
					r.tls.ca, caFrom = e.CA, filepath.Join(r.dataDir, endpointFile)
				}
			}
		}
	}
	if addrs == "" {
		if upRunning(r.dataDir) {
			return nil, &exitError{code: exitFailed, msg: "fixpoint up on " + r.dataDir + " is starting and has not published its address yet; try again in a moment", err: errStarting}
		}
		return nil, &exitError{code: exitFailed, err: errNoUp, msg: fmt.Sprintf("no fixpoint up is running for %s; start one (fixpoint up -f ENV.cue --data-dir %s), pass --controller HOST:PORT (or set FIXPOINT_ADDR), or save a context with fixpoint login", r.dataDir, r.dataDir)}
	}
	if fromDir && !anyAnswers(strings.Split(addrs, ",")) {
		// A killed up leaves its address behind; its port is closed.
		return nil, &exitError{code: exitFailed, err: errNoUp, msg: fmt.Sprintf("no fixpoint up is running for %s; start one or pass --controller (%s there names %s, which refuses connections)", r.dataDir, endpointFile, addrs)}
	}
	hc, err := r.tls.httpClient()
	if err != nil {
		return nil, exitf(exitFailed, "%v", err)
	}
	list := strings.Split(addrs, ",")
	if r.tls.ca != "" {
		list = httpsByDefault(list)
	}
	c := api.NewClient(list, token, withTLSHints(hc, r.tls.ca, caFrom))
	c.SetReveal(r.reveal)
	if r.envScoped {
		env, _, err := r.chosenEnv(sc)
		if err != nil {
			return nil, exitf(exitFailed, "%v", err)
		}
		c.SetEnv(env)
	}
	return c, nil
}

// revealFlag adds --reveal to a command that shows relation settings or
// config.
func (r *remote) revealFlag(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&r.reveal, "reveal", false, "show secret values (config options of type secret, keys named like password, token, key) instead of <redacted sha256:…>; operator credential only")
}

// flagToken is the token --token, --token-file or $FIXPOINT_TOKEN give,
// read as server and agent read theirs.
func (r *remote) flagToken() (string, error) {
	tok, err := tokenFrom(r.token, r.tokenFile)
	if err != nil {
		return "", exitf(exitFailed, "%v", err)
	}
	return tok, nil
}

// anyAnswers reports whether any of addrs accepts a TCP connection; only a
// refusal counts as "no": a slow or filtered address is left to the
// request to report.
func anyAnswers(addrs []string) bool {
	for _, a := range addrs {
		host := strings.TrimSpace(a)
		if u, err := url.Parse(host); err == nil && u.Host != "" {
			host = u.Host
		}
		c, err := net.DialTimeout("tcp", host, 2*time.Second)
		if err == nil {
			c.Close()
			return true
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return true
		}
	}
	return false
}
