// Command replace measures replacing a control-plane server whose disk
// died, under a steady writer, as docs/operating.md's "Replacing a node"
// does it: three `fixpoint server` processes on 127.0.0.1 hold a state of
// -machines machines; n3 is killed and its data dir removed; `fixpoint
// cluster remove n3` takes it out; `fixpoint cluster snapshot` on n1 and
// n2 compacts their logs (raft keeps its 10,240 trailing entries, and the
// WAL drops the rest a whole segment at a time: at the default size a
// new node can no longer catch up from the log); and n4 joins with an
// empty data dir. One writer registers machines one
// after another through the live servers throughout.
//
// It reports how long n4 took to join and to serve linearizable reads
// (its /readyz answering 200), whether it installed a snapshot, the
// writer's longest wait between two acknowledgements, and whether every
// acknowledged write is on n1, n2 and n4 with their states equal. The
// last line is one JSON object:
//
//	{"bench":"replace","machines":…,"snapshot_bytes":…,"joined_ms":…,"ready_ms":…,"snapshot_install":true,
//	 "writes_while_joining":…,"max_ack_gap_ms":…,"acknowledged":…,"lost":0,"states_equal":true}
//
//	go run ./bench/replace                     # 150,000 machines
//	go run ./bench/replace -machines 100000
//	go run ./bench/replace -bin ./fixpoint     # a binary built beforehand
//
// It exits 1 when an acknowledged write is missing or the states differ.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/fixpoint/fixpoint/model"
)

func main() {
	var (
		bin      = flag.String("bin", "", "the fixpoint binary (default: build ./cmd/fixpoint into a temporary directory)")
		machines = flag.Int("machines", 150000, "machines in the state before the failure, at most 990,000 (n4 installs a snapshot once the compacted log fills whole WAL segments: about 100,000)")
		dir      = flag.String("dir", "", "where the servers keep their data (default: a new temporary directory)")
	)
	flag.Parse()
	if *machines < 1 || *machines > 990_000 {
		fail("-machines is 1 to 990,000 (the control plane's ceiling on machines, less the writer's), not %d", *machines)
	}
	root := *dir
	if root == "" {
		var err error
		if root, err = os.MkdirTemp("", "replace-"); err != nil {
			fail("%v", err)
		}
		defer os.RemoveAll(root)
	}
	if *bin == "" {
		*bin = filepath.Join(root, "fixpoint")
		build := exec.Command("go", "build", "-o", *bin, "./cmd/fixpoint")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fail("build ./cmd/fixpoint (run from the repository root, or pass -bin): %v", err)
		}
	}
	c := &cluster{bin: *bin, root: root}
	r, err := c.replace(*machines)
	c.stop()
	if err != nil {
		fail("%v", err)
	}
	r.print()
	if r.Lost > 0 || !r.StatesEqual {
		os.Exit(1)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "replace: "+format+"\n", args...)
	os.Exit(2)
}

// result is what the JSON line reports.
type result struct {
	Bench           string `json:"bench"`
	Machines        int    `json:"machines"`
	SnapshotBytes   int64  `json:"snapshot_bytes"`
	JoinedMS        int64  `json:"joined_ms"`
	ReadyMS         int64  `json:"ready_ms"`
	SnapshotInstall bool   `json:"snapshot_install"`
	WritesJoining   int64  `json:"writes_while_joining"`
	MaxAckGapMS     int64  `json:"max_ack_gap_ms"`
	Acknowledged    int    `json:"acknowledged"`
	Unclear         int64  `json:"unclear"`
	Lost            int    `json:"lost"`
	StatesEqual     bool   `json:"states_equal"`
}

func (r *result) print() {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "machines before the failure\t%d\n", r.Machines)
	fmt.Fprintf(tw, "n1's snapshot\t%.1f MiB\n", float64(r.SnapshotBytes)/(1<<20))
	fmt.Fprintf(tw, "n4 joined (a voter) after\t%d ms\n", r.JoinedMS)
	fmt.Fprintf(tw, "n4 served linearizable reads after\t%d ms\n", r.ReadyMS)
	fmt.Fprintf(tw, "n4 installed a snapshot\t%v\n", r.SnapshotInstall)
	fmt.Fprintf(tw, "writes acknowledged while n4 caught up\t%d\n", r.WritesJoining)
	fmt.Fprintf(tw, "writer's longest wait for an ack\t%d ms\n", r.MaxAckGapMS)
	fmt.Fprintf(tw, "writes acknowledged / unclear / lost\t%d / %d / %d\n", r.Acknowledged, r.Unclear, r.Lost)
	fmt.Fprintf(tw, "n1, n2, n4 hold equal states\t%v\n", r.StatesEqual)
	tw.Flush()
	line, _ := json.Marshal(r)
	fmt.Println(string(line))
}

// cluster is the servers the bench runs, by id.
type cluster struct {
	bin, root string
	token     string
	tokenFile string
	mu        sync.Mutex
	servers   map[string]*server
}

// server is one `fixpoint server` process.
type server struct {
	id, dir, addr string
	cmd           *exec.Cmd
	out           *bytes.Buffer
	done          chan struct{}
}

// start starts server id on a new data dir with extra flags and waits
// until it publishes its API address.
func (c *cluster) start(id string, extra ...string) (*server, error) {
	s := &server{id: id, dir: filepath.Join(c.root, id), out: &bytes.Buffer{}, done: make(chan struct{})}
	args := append([]string{"server", "--node-id", id, "--data-dir", s.dir, "--raft-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--log-level", "info"}, extra...)
	s.cmd = exec.Command(c.bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = &lockedWriter{w: s.out}, &lockedWriter{w: s.out}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		_ = s.cmd.Wait()
		close(s.done)
	}()
	c.mu.Lock()
	if c.servers == nil {
		c.servers = map[string]*server{}
	}
	c.servers[id] = s
	c.mu.Unlock()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var ep struct {
			Addr string `json:"addr"`
		}
		if data, err := os.ReadFile(filepath.Join(s.dir, "controller.json")); err == nil && json.Unmarshal(data, &ep) == nil && ep.Addr != "" {
			s.addr = ep.Addr
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("%s exited: %s", id, s.output())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s did not serve within 2 minutes: %s", id, s.output())
		}
	}
}

// lockedWriter lets the bench read a process's output while it writes.
type lockedWriter struct{ w *bytes.Buffer }

// outputMu guards every server's output buffer.
var outputMu sync.Mutex

func (l *lockedWriter) Write(p []byte) (int, error) {
	outputMu.Lock()
	defer outputMu.Unlock()
	return l.w.Write(p)
}

func (s *server) output() string {
	outputMu.Lock()
	defer outputMu.Unlock()
	return s.out.String()
}

func (s *server) kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

func (c *cluster) stop() {
	for _, s := range c.servers {
		s.kill()
	}
}

// do sends one request with the operator token.
func (c *cluster) do(ctx context.Context, method, addr, path string, body []byte) (int, []byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(addr, "/")+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, resp.Header, err
}

// register registers machine name at addr through a server; ok says
// whether the write was acknowledged.
func (c *cluster) register(addr, name, ip string) (ok bool, err error) {
	body, _ := json.Marshal(model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: name, Address: ip}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	code, msg, _, err := c.do(ctx, http.MethodPost, addr, "/v1/raft/apply", body)
	switch {
	case err != nil:
		return false, nil
	case code == http.StatusConflict:
		return false, fmt.Errorf("write %s refused: %s", name, msg)
	}
	return code == http.StatusOK, nil
}

// cli runs the fixpoint binary as an operator would.
func (c *cluster) cli(args ...string) error {
	cmd := exec.Command(c.bin, args...)
	cmd.Env = append(os.Environ(), "FIXPOINT_TOKEN="+c.token)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("fixpoint %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// writer registers machines one after another through route until
// stopped.
type writer struct {
	c       *cluster
	route   atomic.Pointer[[]string]
	mu      sync.Mutex
	acks    map[string]string
	lastAck time.Time
	maxGap  time.Duration
	count   atomic.Int64
	unclear atomic.Int64
	err     error
	stop    chan struct{}
	done    chan struct{}
}

func (w *writer) run() {
	defer close(w.done)
	for i := 0; ; i++ {
		select {
		case <-w.stop:
			return
		default:
		}
		via := *w.route.Load()
		name, ip := fmt.Sprintf("w%d", i), fmt.Sprintf("10.2.%d.%d", i/250%250, i%250)
		ok, err := w.c.register(via[i%len(via)], name, ip)
		w.mu.Lock()
		switch {
		case err != nil:
			w.err = err
			w.mu.Unlock()
			return
		case ok:
			now := time.Now()
			w.maxGap = max(w.maxGap, now.Sub(w.lastAck))
			w.lastAck = now
			w.acks[name] = ip
			w.count.Add(1)
		default:
			w.unclear.Add(1)
		}
		w.mu.Unlock()
	}
}

// waitMore waits until n more writes are acknowledged.
func (w *writer) waitMore(n int64) error {
	want := w.count.Load() + n
	deadline := time.Now().Add(2 * time.Minute)
	for w.count.Load() < want {
		w.mu.Lock()
		err := w.err
		w.mu.Unlock()
		if err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the writer had %d acknowledgements, not %d, after 2 minutes", w.count.Load(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// replace runs the scenario.
func (c *cluster) replace(machines int) (*result, error) {
	// The writes go beyond the default bound on machines.
	n1, err := c.start("n1", "--bootstrap", "--max-machines", "1000000")
	if err != nil {
		return nil, err
	}
	tok, err := os.ReadFile(filepath.Join(n1.dir, "operator.token"))
	if err != nil {
		return nil, err
	}
	c.token = strings.TrimSpace(string(tok))
	c.tokenFile = filepath.Join(c.root, "operator.token")
	if err := os.WriteFile(c.tokenFile, tok, 0o600); err != nil {
		return nil, err
	}
	join := func(id string, through ...*server) (*server, error) {
		var addrs []string
		for _, s := range through {
			addrs = append(addrs, s.addr)
		}
		return c.start(id, "--join", strings.Join(addrs, ","), "--token-file", c.tokenFile)
	}
	n2, err := join("n2", n1)
	if err != nil {
		return nil, err
	}
	n3, err := join("n3", n1)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "registering %d machines...\n", machines)
	if err := c.preload(n1.addr, machines); err != nil {
		return nil, err
	}

	w := &writer{c: c, acks: map[string]string{}, lastAck: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	w.route.Store(&[]string{n1.addr, n2.addr})
	go w.run()
	defer func() {
		select {
		case <-w.stop:
		default:
			close(w.stop)
		}
		<-w.done
	}()
	if err := w.waitMore(50); err != nil {
		return nil, err
	}
	// n3's disk dies.
	n3.kill()
	if err := os.RemoveAll(n3.dir); err != nil {
		return nil, err
	}
	live := n1.addr + "," + n2.addr
	if err := c.cli("cluster", "remove", "n3", "--controller", live); err != nil {
		return nil, err
	}
	for _, s := range []*server{n1, n2} {
		if err := c.cli("cluster", "snapshot", "--controller", s.addr); err != nil {
			return nil, err
		}
	}
	if err := w.waitMore(20); err != nil {
		return nil, err
	}

	fmt.Fprintln(os.Stderr, "n4 joins...")
	written := w.count.Load()
	start := time.Now()
	n4, err := join("n4", n1, n2)
	if err != nil {
		return nil, err
	}
	joined := time.Since(start)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		code, _, _, _ := c.do(ctx, http.MethodGet, n4.addr, "/readyz", nil)
		cancel()
		if code == http.StatusOK {
			break
		}
		if time.Since(start) > 5*time.Minute {
			return nil, errors.New("n4 was not ready within 5 minutes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ready := time.Since(start)
	during := w.count.Load() - written
	w.route.Store(&[]string{n1.addr, n2.addr, n4.addr})
	if err := w.waitMore(50); err != nil {
		return nil, err
	}
	close(w.stop)
	<-w.done

	r := &result{Bench: "replace", Machines: machines, JoinedMS: joined.Milliseconds(), ReadyMS: ready.Milliseconds(),
		SnapshotInstall: strings.Contains(n4.output(), "restored snapshot"), WritesJoining: during,
		MaxAckGapMS: w.maxGap.Milliseconds(), Acknowledged: len(w.acks), Unclear: w.unclear.Load(),
		SnapshotBytes: largestSnapshot(filepath.Join(n1.dir, "raft", "snapshots"))}
	final := []*server{n1, n2, n4}
	for _, s := range final {
		st, err := c.state(s.addr, false)
		if err != nil {
			return nil, err
		}
		for name, ip := range w.acks {
			if m := st.Machines[name]; m == nil || m.Address != ip {
				r.Lost++
			}
		}
	}
	r.StatesEqual = c.statesEqual(final)
	return r, nil
}

// preload registers n machines through addr, 16 at a time.
func (c *cluster) preload(addr string, n int) error {
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 16 {
				ok, err := c.register(addr, fmt.Sprintf("p%d", i), fmt.Sprintf("10.3.%d.%d", i/250%250, i%250))
				if err == nil && !ok {
					err = fmt.Errorf("machine p%d not acknowledged", i)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// state reads a server's state: linearizable, or its own copy with stale.
func (c *cluster) state(addr string, stale bool) (*model.State, error) {
	path := "/v1/state"
	if stale {
		path += "?stale"
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code, body, _, err := c.do(ctx, http.MethodGet, addr, path, nil)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("GET %s%s: %d %s", addr, path, code, body)
	}
	st := model.NewState()
	return st, json.Unmarshal(body, st)
}

// statesEqual waits up to a minute for the servers' own copies to be
// byte-equal at one index.
func (c *cluster) statesEqual(servers []*server) bool {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var first string
		equal := true
		for _, s := range servers {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			code, body, h, err := c.do(ctx, http.MethodGet, s.addr, "/v1/state?stale", nil)
			cancel()
			if err != nil || code != http.StatusOK {
				equal = false
				break
			}
			got := h.Get("X-Fixpoint-Index") + " " + string(body)
			if first == "" {
				first = got
			} else if got != first {
				equal = false
				break
			}
		}
		if equal {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// largestSnapshot is the size of the largest snapshot's state in dir (raft
// keeps two; the newer holds more machines), 0 if none.
func largestSnapshot(dir string) int64 {
	entries, _ := os.ReadDir(dir)
	var size int64
	for _, e := range entries {
		if fi, err := os.Stat(filepath.Join(dir, e.Name(), "state.bin")); err == nil {
			size = max(size, fi.Size())
		}
	}
	return size
}
