// Package servers runs three `fixpoint server` processes on loopback for
// the bench programs: the first bootstrapped, the others joined with the
// operator token, each logging to a file beside its data dir.
package servers

import (
	"bytes"
	"context"
	"encoding/json"
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
}

// Cluster is three servers, the first bootstrapped, the others joined.
type Cluster struct {
	Servers []*Server
	// Token is the operator token; Client makes the bench's own
	// requests to the servers.
	Token  string
	Client *http.Client
}

// Start starts three servers of bin under root, each with flags(id)
// besides its own, and waits until all are voters with a leader. client
// makes the bench's requests to them (nil: http.DefaultClient). The
// cluster is returned even with an error, for Stop.
func Start(bin, root string, client *http.Client, flags func(id string) []string) (*Cluster, error) {
	if client == nil {
		client = http.DefaultClient
	}
	c := &Cluster{Client: client}
	for i := range 3 {
		id := fmt.Sprintf("n%d", i+1)
		s := &Server{ID: id, Dir: filepath.Join(root, id)}
		args := []string{"server", "--node-id", id, "--data-dir", s.Dir,
			"--raft-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--log-level", "error"}
		if flags != nil {
			args = append(args, flags(id)...)
		}
		if i == 0 {
			args = append(args, "--bootstrap")
		} else {
			// The token in the environment, not on the command line
			// (ps shows that), and understood by servers old and new.
			args = append(args, "--join", c.Servers[0].Addr)
		}
		if err := os.MkdirAll(s.Dir, 0o700); err != nil {
			return c, err
		}
		log, err := os.Create(filepath.Join(root, id+".log"))
		if err != nil {
			return c, err
		}
		s.Log = log
		s.Cmd = exec.Command(bin, args...)
		s.Cmd.Stdout, s.Cmd.Stderr = log, log
		s.Cmd.Env = append(os.Environ(), "FIXPOINT_TOKEN="+c.Token)
		// A bench killed before it can stop them takes its servers along.
		s.Cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := s.Cmd.Start(); err != nil {
			return c, fmt.Errorf("start %s: %w", id, err)
		}
		c.Servers = append(c.Servers, s)
		if s.Addr, err = waitEndpoint(s); err != nil {
			return c, err
		}
		if i == 0 {
			b, err := os.ReadFile(filepath.Join(s.Dir, "operator.token"))
			if err != nil {
				return c, err
			}
			c.Token = strings.TrimSpace(string(b))
		}
	}
	return c, c.waitVoters()
}

// waitEndpoint waits for s to write the address it serves on.
func waitEndpoint(s *Server) (string, error) {
	deadline := time.Now().Add(time.Minute)
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
	return "", fmt.Errorf("%s did not start serving; see %s", s.ID, s.Log.Name())
}

// Member is what GET /v1/raft/members says of one node.
type Member struct {
	ID       string `json:"id"`
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

// Members asks the first server for the members.
func (c *Cluster) Members() ([]Member, error) {
	data, err := c.Get(c.Servers[0].Addr + "/v1/raft/members")
	if err != nil {
		return nil, fmt.Errorf("members: %w", err)
	}
	var ms []Member
	return ms, json.Unmarshal(data, &ms)
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
		done := make(chan struct{})
		go func() {
			_ = s.Cmd.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = s.Cmd.Process.Kill()
			<-done
		}
		s.Log.Close()
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(data))
	}
	return data, nil
}
