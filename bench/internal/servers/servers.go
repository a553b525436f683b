// Package servers runs three `fixpoint server` processes on loopback for
// the bench programs: the first bootstrapped, the others joined with the
// operator token, each logging to a file beside its data dir. A bench may
// restart one of them or add one (rejoin.go).
package servers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Server is one `fixpoint server` process.
type Server struct {
	ID, Dir, Addr string
	Cmd           *exec.Cmd
	Log           *os.File
	// Started is when Cmd was started: a restart's clock starts there.
	Started time.Time
}

// Cluster is three servers, the first bootstrapped, the others joined,
// and any added later (Add).
type Cluster struct {
	Servers []*Server
	// Token is the operator token; Client makes the bench's own
	// requests to the servers.
	Token  string
	Client *http.Client
	// bin, root and flags start every server alike, the later ones too.
	bin, root string
	flags     func(id string) []string
}

// Start starts three servers of bin under root, each with flags(id)
// besides its own, and waits until all are voters with a leader. client
// makes the bench's requests to them (nil: http.DefaultClient). The
// cluster is returned even with an error, for Stop.
func Start(bin, root string, client *http.Client, flags func(id string) []string) (*Cluster, error) {
	if client == nil {
		client = http.DefaultClient
	}
	c := &Cluster{Client: client, bin: bin, root: root, flags: flags}
	for i := range 3 {
		role := []string{"--bootstrap"}
		if i > 0 {
			// The token in the environment, not on the command line
			// (ps shows that), and understood by servers old and new.
			role = []string{"--join", c.Servers[0].Addr}
		}
		if _, err := c.start(fmt.Sprintf("n%d", i+1), role...); err != nil {
			return c, err
		}
		if i == 0 {
			b, err := os.ReadFile(filepath.Join(c.Servers[0].Dir, "operator.token"))
			if err != nil {
				return c, err
			}
			c.Token = strings.TrimSpace(string(b))
		}
	}
	return c, c.waitVoters()
}

// start starts server id on a data dir of its own under the cluster's
// root, with the cluster's flags and role's, and adds it to Servers once
// its process runs. It returns when the server publishes its address.
func (c *Cluster) start(id string, role ...string) (*Server, error) {
	s := &Server{ID: id, Dir: filepath.Join(c.root, id)}
	args := []string{"server", "--node-id", id, "--data-dir", s.Dir,
		"--raft-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--log-level", "error"}
	if c.flags != nil {
		args = append(args, c.flags(id)...)
	}
	args = append(args, role...)
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return nil, err
	}
	err := c.launch(s, args, append(os.Environ(), "FIXPOINT_TOKEN="+c.Token))
	if s.Cmd != nil && s.Cmd.Process != nil {
		c.Servers = append(c.Servers, s)
	}
	return s, err
}

// launch runs the cluster's binary with args and env as s, its output
// appended to s's log beside the data dirs, and waits for the address it
// serves on.
func (c *Cluster) launch(s *Server, args, env []string) error {
	log, err := os.OpenFile(filepath.Join(c.root, s.ID+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	s.Log = log
	s.Cmd = exec.Command(c.bin, args...)
	s.Cmd.Stdout, s.Cmd.Stderr = log, log
	s.Cmd.Env = env
	// A bench killed before it can stop them takes its servers along.
	s.Cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	s.Started = time.Now()
	if err := s.Cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.ID, err)
	}
	s.Addr, err = waitEndpoint(s)
	return err
}

// waitEndpoint waits for s to write the address it serves on; a node
// restarted on a large state restores its snapshot first.
func waitEndpoint(s *Server) (string, error) {
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(filepath.Join(s.Dir, "controller.json"))
		var e struct {
			Addr string `json:"addr"`
		}
		if err == nil && json.Unmarshal(b, &e) == nil && e.Addr != "" {
			return e.Addr, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "", fmt.Errorf("%s did not start serving within 5 minutes; see %s", s.ID, s.Log.Name())
}

// Member is what GET /v1/raft/members says of one node.
type Member struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raft_addr"`
	HTTPAddr string `json:"http_addr"`
	Role     string `json:"role"`
	Voter    bool   `json:"voter"`
}

// Led reports whether n members are voters that answer, one of them the
// leader: a cluster ready for a bench's writes.
func Led(ms []Member, n int) bool {
	voters, leaders := 0, 0
	for _, m := range ms {
		if m.Voter && m.Role != "unknown" {
			voters++
		}
		if m.Role == "leader" {
			leaders++
		}
	}
	return voters == n && leaders == 1
}

// Members asks the servers for the members, the first that answers.
func (c *Cluster) Members() ([]Member, error) {
	var errs []error
	for _, s := range c.Servers {
		data, err := c.Get(s.Addr + "/v1/raft/members")
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.ID, err))
			continue
		}
		var ms []Member
		return ms, json.Unmarshal(data, &ms)
	}
	return nil, fmt.Errorf("members: %w", errors.Join(errs...))
}

// waitVoters waits until all three are voters and one leads.
func (c *Cluster) waitVoters() error {
	deadline := time.Now().Add(time.Minute)
	var last string
	for time.Now().Before(deadline) {
		ms, err := c.Members()
		if err == nil && Led(ms, 3) {
			return nil
		}
		last = fmt.Sprintf("%+v %v", ms, err)
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no three voters with a leader within a minute: %s", last)
}

// Pick returns the leader (via "leader"), or a follower.
func (c *Cluster) Pick(via string) (*Server, error) {
	ms, err := c.Members()
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if (m.Role == "leader") == (via == "leader") {
			for _, s := range c.Servers {
				if s.ID == m.ID {
					return s, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("no %s among %+v", via, ms)
}

// Stop ends the servers and waits for them.
func (c *Cluster) Stop() {
	for _, s := range c.Servers {
		if s.Cmd.Process != nil && s.Cmd.ProcessState == nil {
			_ = s.Cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, s := range c.Servers {
		_ = s.stop(10 * time.Second)
	}
}

// stop sends s SIGTERM and waits for it to exit, killing it after
// grace; it says so when it had to.
func (s *Server) stop(grace time.Duration) error {
	defer s.Log.Close()
	if s.Cmd.Process == nil || s.Cmd.ProcessState != nil {
		return nil
	}
	_ = s.Cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		_ = s.Cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-time.After(grace):
		_ = s.Cmd.Process.Kill()
		<-done
		return fmt.Errorf("%s did not exit within %s of SIGTERM and was killed; see %s", s.ID, grace, s.Log.Name())
	}
}

// Get is an operator's GET of url; it returns the 200 answer.
func (c *Cluster) Get(url string) ([]byte, error) {
	return Do(c.Client, http.MethodGet, url, c.Token, "")
}

// Do sends one request with token (and a JSON body unless empty) and
// returns the 200 answer. Each request has its own deadline: the end of a
// measured period must not cut one short and count it as failed.
func Do(client *http.Client, method, url, token, body string) ([]byte, error) {
	data, _, err := request(client, method, url, token, body)
	return data, err
}

// request is Do with the answer's header.
func request(client *http.Client, method, url, token, body string) ([]byte, http.Header, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(data))
	}
	return data, resp.Header, nil
}
