package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/api"
)

// remote holds the flags every command that talks to a control plane has.
type remote struct {
	controller string
	dataDir    string
	tls        tlsFlags
}

func (r *remote) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&r.controller, "controller", "", "control-plane address(es), host:port or URL, comma-separated (default $FIXPOINT_ADDR, or the one `up` wrote to --data-dir)")
	cmd.Flags().StringVar(&r.dataDir, "data-dir", defaultDataDir, "data directory of a running `up`, to find its address and token")
	cmd.Flags().StringVar(&r.tls.ca, "tls-ca", "", "CA certificate (PEM) the control plane's certificate must chain to (default: the one `up` or `server` wrote to --data-dir)")
	cmd.Flags().StringVar(&r.tls.cert, "tls-cert", "", "client certificate (PEM), if the control plane asks for one")
	cmd.Flags().StringVar(&r.tls.key, "tls-key", "", "its private key (PEM)")
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

// client finds the control plane: --controller, $FIXPOINT_ADDR, then the
// data dir.
func (r *remote) client() (*api.Client, error) {
	addrs := r.controller
	if addrs == "" {
		addrs = os.Getenv("FIXPOINT_ADDR")
	}
	token := os.Getenv("FIXPOINT_TOKEN")
	if addrs == "" || token == "" || r.tls.ca == "" {
		data, err := os.ReadFile(filepath.Join(r.dataDir, endpointFile))
		if err == nil {
			var e endpoint
			if json.Unmarshal(data, &e) == nil {
				if addrs == "" {
					addrs = e.Addr
				}
				if token == "" {
					token = e.Token
				}
				if r.tls.ca == "" {
					r.tls.ca = e.CA
				}
			}
		}
	}
	if addrs == "" {
		return nil, exitf(exitFailed, "no control plane to talk to: pass --controller HOST:PORT, set FIXPOINT_ADDR, or run `fixpoint up` with --data-dir %s", r.dataDir)
	}
	hc, err := r.tls.httpClient()
	if err != nil {
		return nil, exitf(exitFailed, "%v", err)
	}
	return api.NewClient(strings.Split(addrs, ","), token, hc), nil
}
