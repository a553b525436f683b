package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/fixpoint/fixpoint/bench/internal/servers"
	"github.com/fixpoint/fixpoint/bench/release"
	"github.com/fixpoint/fixpoint/engine/api"
)

// server is one `fixpoint server` and where it keeps its data.
type server struct {
	proc
	id   string
	dir  string
	host string // the address it listens on
	url  string // its API, https://host:port
	// mounted is set when dir is a tmpfs the bench made.
	mounted bool
}

// cluster is three TLS servers and three agents, and an HTTPS client that
// trusts their CA.
type cluster struct {
	bin     string
	root    string
	nw      *network
	servers []*server
	agents  []*proc
	token   string
	hc      *http.Client
	// diskOff says why the disk fault is not possible, "" when it is.
	diskOff string
	// prev is the previous release's fixpoint, which n1 bootstraps on and
	// the agents run (agents may be a release behind the servers, not
	// ahead), so that the cluster's feature level stays where both builds
	// apply every entry; prevOff says why there is none, "" when there is.
	prev, prevOff string
}

// otherBuild is the binary of the other build than bin.
func (c *cluster) otherBuild(bin string) string {
	if bin == c.prev {
		return c.bin
	}
	return c.prev
}

// buildName names the build bin is.
func (c *cluster) buildName(bin string) string {
	if bin == c.prev {
		return release.Previous
	}
	return "this build"
}

// serverBin is what server i starts on: n1 bootstraps on the previous
// release when there is one.
func (c *cluster) serverBin(i int) string {
	if i == 0 && c.prev != "" {
		return c.prev
	}
	return c.bin
}

// agentBin is what the agents run.
func (c *cluster) agentBin() string {
	if c.prev != "" {
		return c.prev
	}
	return c.bin
}

// nodeStatus is GET /v1/raft/status: one node's own account.
type nodeStatus struct {
	ID           string `json:"id"`
	Role         string `json:"role"`
	Leader       string `json:"leader"`
	Term         uint64 `json:"term"`
	AppliedIndex uint64 `json:"applied_index"`
	LastIndex    uint64 `json:"last_index"`
}

// startCluster makes the CA and certificates, starts the servers (each
// data dir on a tmpfs of diskMiB when the bench may mount one) and the
// agents, and returns once three voters have a leader and every agent has
// registered its machine.
func startCluster(ctx context.Context, bin, prev, prevOff, root string, nw *network, diskMiB int, logLevel string) (*cluster, error) {
	c := &cluster{bin: bin, prev: prev, prevOff: prevOff, root: root, nw: nw}
	tlsDir := filepath.Join(root, "tls")
	if err := c.fixpoint("tls", "init", "--dir", tlsDir); err != nil {
		return c, err
	}
	ca, err := os.ReadFile(filepath.Join(tlsDir, "ca.pem"))
	if err != nil {
		return c, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return c, fmt.Errorf("no certificate in %s/ca.pem", tlsDir)
	}
	c.hc = &http.Client{Transport: &http.Transport{
		DialContext:         nw.dial,
		TLSClientConfig:     &tls.Config{RootCAs: pool},
		MaxIdleConnsPerHost: 16,
		// A paused or partitioned node answers nothing: give up on it.
		ResponseHeaderTimeout: 10 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
	}}
	c.diskOff = c.diskPossible(diskMiB)
	ports, err := c.ports()
	if err != nil {
		return c, err
	}
	for i := range 3 {
		id := fmt.Sprintf("n%d", i+1)
		s := &server{id: id, dir: filepath.Join(root, id), host: nw.addrs[i]}
		s.url = fmt.Sprintf("https://%s:%d", s.host, ports[2*i+1])
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return c, err
		}
		if c.diskOff == "" {
			if err := mountTmpfs(s.dir, diskMiB); err != nil {
				return c, err
			}
			s.mounted = true
		}
		if err := c.fixpoint("tls", "cert", "--dir", tlsDir, "--role", "server", "--name", id, "--host", s.host); err != nil {
			return c, err
		}
		s.proc = proc{name: id, bin: c.serverBin(i), ns: nw.nodeNS(i), log: filepath.Join(root, id+".log"), args: []string{
			"server", "--node-id", id, "--data-dir", s.dir,
			"--raft-addr", fmt.Sprintf("%s:%d", s.host, ports[2*i]),
			"--http-addr", fmt.Sprintf("%s:%d", s.host, ports[2*i+1]),
			"--tls-cert", filepath.Join(tlsDir, id+".pem"), "--tls-key", filepath.Join(tlsDir, id+"-key.pem"),
			"--tls-ca", filepath.Join(tlsDir, "ca.pem"),
			"--log-level", logLevel,
			// The timer's runs would keep the log moving after the heal.
			"--update-status-interval", "0",
		}}
		if i == 0 {
			s.args = append(s.args, "--bootstrap")
		} else {
			s.args = append(s.args, "--join", c.servers[0].url, "--token-file", filepath.Join(root, "operator.token"))
		}
		c.servers = append(c.servers, s)
		if err := s.start(); err != nil {
			return c, err
		}
		if err := c.waitServing(ctx, i, 2*time.Minute); err != nil {
			return c, err
		}
	}
	if err := c.waitVoters(ctx); err != nil {
		return c, err
	}
	var urls []string
	for _, s := range c.servers {
		urls = append(urls, s.url)
	}
	for i := range 3 {
		m := fmt.Sprintf("m%d", i+1)
		dir := filepath.Join(root, "agents", m)
		// The agent's hook dirs go in the bench's root, so an agent
		// killed mid-hook leaves nothing behind once the root goes.
		tmp := filepath.Join(root, "tmp-"+m)
		for _, d := range []string{dir, tmp} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return c, err
			}
		}
		a := &proc{name: m, bin: c.agentBin(), ns: nw.hub, log: filepath.Join(root, m+".log"), env: []string{"TMPDIR=" + tmp}, args: []string{
			"agent", "--controller", strings.Join(urls, ","), "--machine", m, "--data-dir", dir,
			"--token-file", filepath.Join(root, "join.token"), "--tls-ca", filepath.Join(tlsDir, "ca.pem"),
			"--log-level", "warn",
		}}
		c.agents = append(c.agents, a)
		if err := a.start(); err != nil {
			return c, err
		}
	}
	return c, c.waitMachines(ctx)
}

// fixpoint runs one short fixpoint command.
func (c *cluster) fixpoint(args ...string) error {
	out, err := exec.Command(c.bin, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("fixpoint %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// ports are each server's Raft and HTTP ports: fixed inside namespaces,
// picked by the OS on loopback. A restarted server keeps its ports.
func (c *cluster) ports() ([]int, error) {
	var ps []int
	if c.nw.hub != "" {
		for range 3 {
			ps = append(ps, 7000, 7070)
		}
		return ps, nil
	}
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range 6 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ps = append(ps, l.Addr().(*net.TCPAddr).Port)
	}
	return ps, nil
}

// keepTokens copies the bootstrap node's operator and join tokens into
// files only the bench may read, for the joining servers and the agents.
func (c *cluster) keepTokens(dir string) error {
	for _, name := range []string{"operator.token", "join.token"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("read the bootstrap node's %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(c.root, name), b, 0o600); err != nil {
			return err
		}
		if name == "operator.token" {
			c.token = strings.TrimSpace(string(b))
		}
	}
	return nil
}

// call sends one request to server i; a non-2xx answer is an error
// holding the status and body.
func (c *cluster) call(ctx context.Context, i int, method, path string, hdr map[string]string, body []byte, out any) (http.Header, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.servers[i].url+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return resp.Header, &httpError{code: resp.StatusCode, body: string(bytes.TrimSpace(data))}
	}
	if out != nil {
		if b, ok := out.(*[]byte); ok {
			*b = data
			return resp.Header, nil
		}
		if err := json.Unmarshal(data, out); err != nil {
			return resp.Header, fmt.Errorf("%s %s on %s: decode: %w", method, path, c.servers[i].id, err)
		}
	}
	return resp.Header, nil
}

// httpError is an answer other than 2xx.
type httpError struct {
	code int
	body string
}

func (e *httpError) Error() string { return fmt.Sprintf("%d: %s", e.code, e.body) }

// status asks server i for its own Raft status, within a few seconds.
func (c *cluster) status(ctx context.Context, i int) (nodeStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var st nodeStatus
	_, err := c.call(ctx, i, http.MethodGet, "/v1/raft/status", nil, nil, &st)
	return st, err
}

// waitServing waits until server i answers its status, or it exits.
func (c *cluster) waitServing(ctx context.Context, i int, within time.Duration) error {
	s := c.servers[i]
	deadline := time.Now().Add(within)
	for {
		if c.token == "" {
			// The bootstrap node writes the tokens as it starts.
			_ = c.keepTokens(s.dir)
		}
		if _, err := c.status(ctx, i); err == nil {
			return nil
		} else if !s.alive() {
			return fmt.Errorf("%s exited (%s); see %s%s", s.id, s.exited(), s.log, tail(s.log))
		} else if time.Now().After(deadline) {
			return fmt.Errorf("%s does not answer within %s: %v; see %s", s.id, within, err, s.log)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// waitVoters waits until the three servers are voters with one leader.
func (c *cluster) waitVoters(ctx context.Context) error {
	deadline := time.Now().Add(2 * time.Minute)
	var last string
	for time.Now().Before(deadline) {
		var ms []servers.Member
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := c.call(cctx, 0, http.MethodGet, "/v1/raft/members", nil, nil, &ms)
		cancel()
		if err == nil && servers.Led(ms, 3) {
			return nil
		}
		last = fmt.Sprintf("%+v %v", ms, err)
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("no three voters with a leader within two minutes: %s", last)
}

// waitMachines waits until every agent's machine is registered.
func (c *cluster) waitMachines(ctx context.Context) error {
	deadline := time.Now().Add(2 * time.Minute)
	var last error
	for time.Now().Before(deadline) {
		var st struct {
			Machines map[string]json.RawMessage `json:"machines"`
		}
		_, err := c.any(ctx, http.MethodGet, "/v1/state", nil, nil, &st)
		if err == nil && len(st.Machines) == len(c.agents) {
			return nil
		}
		last = fmt.Errorf("%d of %d machines registered (%v)", len(st.Machines), len(c.agents), err)
		for _, a := range c.agents {
			if !a.alive() {
				return fmt.Errorf("agent %s exited (%s); see %s%s", a.name, a.exited(), a.log, tail(a.log))
			}
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("agents did not register within two minutes: %v", last)
}

// any sends a request to each server in turn until one answers 2xx.
func (c *cluster) any(ctx context.Context, method, path string, hdr map[string]string, body []byte, out any) (http.Header, error) {
	var errs []error
	for i := range c.servers {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		h, err := c.call(cctx, i, method, path, hdr, body, out)
		cancel()
		if err == nil {
			return h, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", c.servers[i].id, err))
	}
	return nil, errors.Join(errs...)
}

// stop ends every agent, then every server, and unmounts the data dirs.
func (c *cluster) stop() {
	for _, a := range c.agents {
		a.stop(10 * time.Second)
	}
	for _, s := range c.servers {
		s.stop(20 * time.Second)
	}
}

// unmount removes the tmpfs mounts; their contents go with them unless
// keep, which copies each first to nN-data beside it.
func (c *cluster) unmount(keep bool) {
	for _, s := range c.servers {
		if s.mounted && keep {
			if out, err := exec.Command("cp", "-a", s.dir, s.dir+"-data").CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "chaos: keep %s's data: %v: %s\n", s.id, err, out)
			}
		}
		if s.mounted {
			if err := unmountTmpfs(s.dir); err == nil {
				s.mounted = false
			} else {
				fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
			}
		}
	}
}

// sleep waits d unless ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// client is an API client of the whole cluster: each request tries the
// servers in turn, as the CLI's does with several --controller addresses.
func (c *cluster) client() *api.Client {
	urls := make([]string, len(c.servers))
	for i, s := range c.servers {
		urls[i] = s.url
	}
	return api.NewClient(urls, c.token, c.hc)
}
