package servers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Restart stops s with SIGTERM, waits for it to exit, and starts it again
// with the same flags and environment on the same data dir and the same
// addresses, as a service manager restarts a node. It returns when the
// new process serves its API; s.Started is when it was started.
func (c *Cluster) Restart(s *Server) error {
	ms, err := c.Members()
	if err != nil {
		return fmt.Errorf("restart %s: %w", s.ID, err)
	}
	i := slices.IndexFunc(ms, func(m Member) bool { return m.ID == s.ID })
	if i < 0 || ms[i].RaftAddr == "" {
		return fmt.Errorf("restart %s: not among the members %+v", s.ID, ms)
	}
	_, httpAddr, _ := strings.Cut(s.Addr, "://")
	args, env := pinned(s.Cmd.Args[1:], ms[i].RaftAddr, httpAddr), s.Cmd.Env
	if err := s.stop(time.Minute); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	// The address file of the stopped process must not pass for the
	// new one's.
	if err := os.Remove(filepath.Join(s.Dir, "controller.json")); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("restart %s: %w", s.ID, err)
	}
	return c.launch(s, args, env)
}

// pinned is a server's arguments with the addresses it was given (port 0
// for the system to pick) replaced by those it got.
func pinned(args []string, raftAddr, httpAddr string) []string {
	out := slices.Clone(args)
	for i := 0; i+1 < len(out); i++ {
		switch out[i] {
		case "--raft-addr":
			out[i+1] = raftAddr
		case "--http-addr":
			out[i+1] = httpAddr
		}
	}
	return out
}

// Add starts server id with the cluster's flags, joined through the
// members, and returns once it serves its API (a member or not yet).
func (c *Cluster) Add(id string) (*Server, error) {
	var addrs []string
	for _, s := range c.Servers {
		addrs = append(addrs, s.Addr)
	}
	return c.start(id, "--join", strings.Join(addrs, ","))
}

// Snapshot makes s take a Raft snapshot now and compact its log; it
// returns the index s had applied then.
func (c *Cluster) Snapshot(s *Server) (uint64, error) {
	data, err := Do(c.Client, http.MethodPost, s.Addr+"/v1/raft/snapshot", c.Token, "{}")
	if err != nil {
		return 0, fmt.Errorf("snapshot %s: %w", s.ID, err)
	}
	var ans struct {
		Index uint64 `json:"index"`
	}
	if err := json.Unmarshal(data, &ans); err != nil {
		return 0, fmt.Errorf("snapshot %s: %w", s.ID, err)
	}
	return ans.Index, nil
}

// Mark is how far a node has come: the last Raft entry it applied and
// the index of its copy of the state, which entries that change only the
// membership do not move.
type Mark struct {
	Applied uint64
	State   uint64
}

// Mark reads how far s has come, from itself: its Raft status and a stale
// read of its status summary.
func (c *Cluster) Mark(s *Server) (Mark, error) {
	data, err := c.Get(s.Addr + "/v1/raft/status")
	if err != nil {
		return Mark{}, fmt.Errorf("%s's raft status: %w", s.ID, err)
	}
	var st struct {
		AppliedIndex uint64 `json:"applied_index"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return Mark{}, fmt.Errorf("%s's raft status: %w", s.ID, err)
	}
	_, h, err := request(c.Client, http.MethodGet, s.Addr+"/v1/status?summary=1&stale", c.Token, "")
	if err != nil {
		return Mark{}, fmt.Errorf("%s's stale status: %w", s.ID, err)
	}
	idx, err := strconv.ParseUint(h.Get("X-Fixpoint-Index"), 10, 64)
	if err != nil {
		return Mark{}, fmt.Errorf("%s's stale status: X-Fixpoint-Index: %w", s.ID, err)
	}
	return Mark{Applied: st.AppliedIndex, State: idx}, nil
}

// WaitCaughtUp waits, at most timeout, until s has applied to.Applied,
// answers a stale read of the state at to.State or later and is a voter
// that answers for itself among the members.
func (c *Cluster) WaitCaughtUp(s *Server, to Mark, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		if m, err := c.Mark(s); err != nil {
			last = err.Error()
		} else if m.Applied < to.Applied || m.State < to.State {
			last = fmt.Sprintf("%s at %+v", s.ID, m)
		} else if ms, err := c.Members(); err != nil {
			last = err.Error()
		} else if i := slices.IndexFunc(ms, func(m Member) bool { return m.ID == s.ID }); i < 0 || !ms[i].Voter || ms[i].Role == "unknown" {
			last = fmt.Sprintf("%s not an answering voter among %+v", s.ID, ms)
		} else {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s did not catch up with %+v within %s: %s; see %s", s.ID, to, timeout, last, s.Log.Name())
}
