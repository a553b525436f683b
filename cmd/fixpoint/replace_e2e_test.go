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
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// apiWriter registers machines one after another over the API, round
// robin through the servers it is given, until stopped, and keeps the
// ones acknowledged.
type apiWriter struct {
	c    *cluster
	mu   sync.Mutex
	via  []string
	acks map[string]string
	// unclear counts writes without an answer: they may have landed.
	unclear atomic.Int64
	n       atomic.Int64
	stop    chan struct{}
	done    chan struct{}
	refused error
}

func startAPIWriter(c *cluster, via ...string) *apiWriter {
	w := &apiWriter{c: c, via: via, acks: map[string]string{}, stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	c.root.Cleanup(w.halt)
	return w
}

func (w *apiWriter) run() {
	defer close(w.done)
	for i := 0; ; i++ {
		select {
		case <-w.stop:
			return
		default:
		}
		w.mu.Lock()
		addr := w.via[i%len(w.via)]
		w.mu.Unlock()
		name, ip := fmt.Sprintf("w%d", i), fmt.Sprintf("10.2.%d.%d", i/250, i%250)
		body, _ := json.Marshal(model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: name, Address: ip}})
		code, err := w.post(addr, body)
		switch {
		case err == nil && code == http.StatusOK:
			w.mu.Lock()
			w.acks[name] = ip
			w.mu.Unlock()
			w.n.Add(1)
		case err == nil && code == http.StatusConflict:
			w.mu.Lock()
			w.refused = fmt.Errorf("write %s through %s refused", name, addr)
			w.mu.Unlock()
			return
		default:
			w.unclear.Add(1)
		}
	}
}

// post sends one write and returns the status; the harness's do fails
// its test, which only the test's goroutine may.
func (w *apiWriter) post(addr string, body []byte) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(addr, "/")+"/v1/raft/apply", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+w.c.token)
	resp, err := w.c.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

func (w *apiWriter) route(via ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.via = via
}

func (w *apiWriter) acked() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]string, len(w.acks))
	for k, v := range w.acks {
		out[k] = v
	}
	return out
}

// waitMore waits until n more writes were acknowledged.
func (w *apiWriter) waitMore(t *testing.T, what string, n int64) {
	t.Helper()
	want := w.n.Load() + n
	rafttest.Eventually(t, 2*time.Minute, what, func() error {
		w.mu.Lock()
		refused := w.refused
		w.mu.Unlock()
		if refused != nil {
			t.Fatal(refused)
		}
		return holds(w.n.Load() >= want, fmt.Sprintf("%d writes acknowledged, %d unclear", w.n.Load(), w.unclear.Load()))
	})
}

func (w *apiWriter) halt() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
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
	w := startAPIWriter(c, c.addrs[0], c.addrs[1])
	w.waitMore(t, "writes before the failure", 30)

	c.sigkill(2)
	if err := os.RemoveAll(c.dirs[2]); err != nil {
		t.Fatal(err)
	}
	if r := c.cliAt(c.addrs[0]+","+c.addrs[1], "cluster", "remove", "n3"); r.code != 0 {
		t.Fatalf("cluster remove n3: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	w.waitMore(t, "writes after the removal", 20)

	// fixpoint server --node-id n4 --data-dir (empty) --join n1,n2
	c.dirs = append(c.dirs, t.TempDir())
	c.procs = append(c.procs, nil)
	c.addrs = append(c.addrs, "")
	before, written := w.acked(), w.n.Load()
	start := time.Now()
	c.startNode(3, "--join", c.addrs[0]+","+c.addrs[1], "--token-file", c.tokenFile)
	joined := time.Since(start)
	rafttest.Eventually(t, 2*time.Minute, "n4 ready", func() error {
		return holds(c.getStatusAt(c.addrs[3], "/readyz") == http.StatusOK, "n4's /readyz is not 200")
	})
	served := time.Since(start)
	during := w.n.Load() - written
	if err := holdsWrites(c.state(c.addrs[3], false), before); err != nil {
		t.Fatalf("n4 ready: %v", err)
	}
	w.route(c.addrs[0], c.addrs[1], c.addrs[3])
	w.waitMore(t, "writes through n4 too", 20)
	w.halt()

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
	acked := w.acked()
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
		joined.Milliseconds(), served.Milliseconds(), during, len(acked), w.unclear.Load())
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
