package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// machineWriter registers machines over the API through the servers
// route holds, round robin: what rafttest.Writer applies here.
func (c *cluster) machineWriter(route *atomic.Pointer[[]string]) rafttest.Write {
	return func(ctx context.Context, i int) (string, string, bool, error) {
		via := *route.Load()
		addr := via[i%len(via)]
		name, ip := fmt.Sprintf("w%d", i), fmt.Sprintf("10.2.%d.%d", i/250, i%250)
		body, _ := json.Marshal(model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: name, Address: ip}})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(addr, "/")+"/v1/raft/apply", bytes.NewReader(body))
		if err != nil {
			return name, ip, false, err
		}
		req.Header.Set("Authorization", "Bearer "+c.token)
		resp, err := c.hc.Do(req)
		if err != nil {
			return name, ip, false, nil
		}
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		if resp.StatusCode == http.StatusConflict {
			return name, ip, false, fmt.Errorf("through %s: %s", addr, msg)
		}
		return name, ip, resp.StatusCode == http.StatusOK, nil
	}
}

// TestReplaceServerUnderLoad is docs/operating.md's "Replacing a node"
// with real servers: n3 dies with its disk under a steady writer,
// `cluster remove n3` takes it out, and n4 on an empty data dir joins
// through the survivors until its /readyz says it serves linearizable
// reads. The writer is acknowledged throughout; n1, n2 and n4 end with
// the same state, holding every acknowledged write. How long n4 took is
// logged.
func TestReplaceServerUnderLoad(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts four servers; skipped in -short")
	}
	c := startCluster(t, 3, false)
	var route atomic.Pointer[[]string]
	route.Store(&[]string{c.addrs[0], c.addrs[1]})
	w := rafttest.StartWriter(t, c.machineWriter(&route))
	w.WaitMore(t, 2*time.Minute, "writes before the failure", 30)

	c.sigkill(2)
	if err := os.RemoveAll(c.dirs[2]); err != nil {
		t.Fatal(err)
	}
	if r := c.cliAt(c.addrs[0]+","+c.addrs[1], "cluster", "remove", "n3"); r.code != 0 {
		t.Fatalf("cluster remove n3: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	w.WaitMore(t, 2*time.Minute, "writes after the removal", 20)

	// fixpoint server --node-id n4 --data-dir (empty) --join n1,n2
	c.dirs = append(c.dirs, t.TempDir())
	c.procs = append(c.procs, nil)
	c.addrs = append(c.addrs, "")
	before, written := w.Acked(), w.Count()
	start := time.Now()
	c.startNode(3, "--join", c.addrs[0]+","+c.addrs[1], "--token-file", c.tokenFile)
	joined := time.Since(start)
	rafttest.Eventually(t, 2*time.Minute, "n4 ready", func() error {
		return holds(c.getStatusAt(c.addrs[3], "/readyz") == http.StatusOK, "n4's /readyz is not 200")
	})
	served := time.Since(start)
	during := w.Count() - written
	if err := holdsWrites(c.state(c.addrs[3], false), before); err != nil {
		t.Fatalf("n4 ready: %v", err)
	}
	route.Store(&[]string{c.addrs[0], c.addrs[1], c.addrs[3]})
	w.WaitMore(t, 2*time.Minute, "writes through n4 too", 20)
	w.Halt()

	live := []int{0, 1, 3}
	ids := map[string]bool{}
	for _, m := range c.members() {
		if m.Voter {
			ids[m.ID] = true
		}
	}
	if len(ids) != 3 || !ids["n1"] || !ids["n2"] || !ids["n4"] {
		t.Errorf("voters %v, want n1, n2, n4", ids)
	}
	acked := w.Acked()
	rafttest.Eventually(t, time.Minute, "n1, n2 and n4 hold the same state", func() error {
		var first string
		for _, i := range live {
			var raw json.RawMessage
			idx, err := c.get(c.addrs[i], "/v1/state?stale", &raw)
			if err != nil {
				return err
			}
			if s := idx + " " + string(raw); first == "" {
				first = s
			} else if s != first {
				return fmt.Errorf("n%d's state differs from n1's", i+1)
			}
		}
		return nil
	})
	for _, i := range live {
		if err := holdsWrites(c.state(c.addrs[i], false), acked); err != nil {
			t.Errorf("n%d: %v", i+1, err)
		}
	}
	if during == 0 {
		t.Error("no write was acknowledged while n4 caught up: the writer stopped")
	}
	t.Logf(`{"replace_server": {"joined_ms": %d, "ready_ms": %d, "writes_while_catching_up": %d, "acknowledged": %d, "unclear": %d}}`,
		joined.Milliseconds(), served.Milliseconds(), during, len(acked), w.Unclear())
}

// holdsWrites reports the first acknowledged write st lacks.
func holdsWrites(st *model.State, acked map[string]string) error {
	for name, addr := range acked {
		if m := st.Machines[name]; m == nil || m.Address != addr {
			return fmt.Errorf("acknowledged write %s is missing", name)
		}
	}
	return nil
}

// getStatusAt is the status code of GET path on one server, 0 when it
// does not answer.
func (c *cluster) getStatusAt(addr, path string) int {
	resp, _, err := c.do(http.MethodGet, addr, path, nil)
	if err != nil {
		return 0
	}
	return resp.StatusCode
}
