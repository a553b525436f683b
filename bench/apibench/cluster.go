package main

import (
	"bytes"
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

// server is one `fixpoint server` process.
type server struct {
	id, dir, addr string
	cmd           *exec.Cmd
	log           *os.File
}

// cluster is three servers, the first bootstrapped, the others joined.
type cluster struct {
	servers []*server
	token   string
}

func startCluster(bin, root string) (*cluster, error) {
	c := &cluster{}
	for i := range 3 {
		id := fmt.Sprintf("n%d", i+1)
		s := &server{id: id, dir: filepath.Join(root, id)}
		args := []string{"server", "--node-id", id, "--data-dir", s.dir,
			"--raft-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--log-level", "error"}
		args = append(args, secure.ServerFlags(id)...)
		if i == 0 {
			args = append(args, "--bootstrap")
		} else {
			// The token in the environment, not on the command line
			// (ps shows that), and understood by servers old and new.
			args = append(args, "--join", c.servers[0].addr)
		}
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return c, err
		}
		log, err := os.Create(filepath.Join(root, id+".log"))
		if err != nil {
			return c, err
		}
		s.log = log
		s.cmd = exec.Command(bin, args...)
		s.cmd.Stdout, s.cmd.Stderr = log, log
		s.cmd.Env = append(os.Environ(), "FIXPOINT_TOKEN="+c.token)
		// A bench killed before it can stop them takes its servers along.
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := s.cmd.Start(); err != nil {
			return c, fmt.Errorf("start %s: %w", id, err)
		}
		c.servers = append(c.servers, s)
		if s.addr, err = waitEndpoint(s); err != nil {
			return c, err
		}
		if i == 0 {
			b, err := os.ReadFile(filepath.Join(s.dir, "operator.token"))
			if err != nil {
				return c, err
			}
			c.token = strings.TrimSpace(string(b))
		}
	}
	return c, c.waitVoters()
}

// waitEndpoint waits for s to write the address it serves on.
func waitEndpoint(s *server) (string, error) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(filepath.Join(s.dir, "controller.json"))
		var e struct {
			Addr string `json:"addr"`
		}
		if err == nil && json.Unmarshal(b, &e) == nil && e.Addr != "" {
			return e.Addr, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "", fmt.Errorf("%s did not start serving; see %s", s.id, s.log.Name())
}

// member is what GET /v1/raft/members says of one node.
type member struct {
	ID       string `json:"id"`
	HTTPAddr string `json:"http_addr"`
	Role     string `json:"role"`
	Voter    bool   `json:"voter"`
}

func (c *cluster) members() ([]member, error) {
	req, err := http.NewRequest(http.MethodGet, c.servers[0].addr+"/v1/raft/members", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := plane.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var ms []member
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("members: %s: %s", resp.Status, bytes.TrimSpace(b))
	}
	return ms, json.NewDecoder(resp.Body).Decode(&ms)
}

// waitVoters waits until all three are voters and one leads.
func (c *cluster) waitVoters() error {
	deadline := time.Now().Add(time.Minute)
	var last string
	for time.Now().Before(deadline) {
		ms, err := c.members()
		voters, leaders := 0, 0
		for _, m := range ms {
			if m.Voter && m.Role != "unknown" {
				voters++
			}
			if m.Role == "leader" {
				leaders++
			}
		}
		if err == nil && voters == 3 && leaders == 1 {
			return nil
		}
		last = fmt.Sprintf("%+v %v", ms, err)
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no three voters with a leader within a minute: %s", last)
}

// pick returns the leader, or a follower.
func (c *cluster) pick(via string) (*server, error) {
	ms, err := c.members()
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if (m.Role == "leader") == (via == "leader") {
			for _, s := range c.servers {
				if s.id == m.ID {
					return s, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("no %s among %+v", via, ms)
}

// stop ends the servers and waits for them.
func (c *cluster) stop() {
	for _, s := range c.servers {
		if s.cmd.Process != nil && s.cmd.ProcessState == nil {
			_ = s.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, s := range c.servers {
		done := make(chan struct{})
		go func() {
			_ = s.cmd.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
		s.log.Close()
	}
}
