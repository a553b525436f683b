package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// The harness every end-to-end test of the package shares: the binary
// TestMain built, run to completion (runFixpoint) or in the background
// (start), and an `up` with its data dir (startUp). Servers and agents
// are in cluster_harness_test.go; waiting is rafttest's.

// binPath is the fixpoint binary TestMain built for the end-to-end tests,
// binErr why it could not be built; tmpRoot holds the TMPDIRs of the
// processes the tests start.
var (
	binPath string
	binErr  error
	tmpRoot string
)

func fixpointBin(t testing.TB) string {
	t.Helper()
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// repo returns a path inside the repository root.
func repo(parts ...string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(append([]string{filepath.Dir(file), "..", ".."}, parts...)...)
}

// demoEnv is the demo's environment, testdata/demo/env.cue.
var demoEnv = repo("testdata", "demo", "env.cue")

// tmpDirs maps each test to the TMPDIR of the processes it starts.
var tmpDirs sync.Map

// procTmp is the TMPDIR of the processes t starts: a directory of t's own
// under tmpRoot, removed when t ends, after its processes are killed, so
// that what a killed agent leaves there (its hooks' run dirs) goes with
// it. It is not under t.TempDir(): a hook's tool socket lives in $TMPDIR,
// and a test's long name would push its path past what a unix socket
// address holds, into /tmp.
func procTmp(t testing.TB) string {
	t.Helper()
	if d, ok := tmpDirs.Load(t); ok {
		return d.(string)
	}
	d, err := os.MkdirTemp(tmpRoot, "t")
	if err != nil {
		t.Fatal(err)
	}
	if prev, loaded := tmpDirs.LoadOrStore(t, d); loaded {
		os.Remove(d)
		return prev.(string)
	}
	t.Cleanup(func() {
		tmpDirs.Delete(t)
		os.RemoveAll(d)
	})
	return d
}

// command is how every fixpoint process a test runs is made: argv (the
// binary, or a wrapper such as `ip netns exec NS` in front of it) with
// env added, TMPDIR t's own (procTmp), killed should the test process
// die, even by a timeout that runs no cleanups.
func command(ctx context.Context, t testing.TB, env []string, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), "TMPDIR="+procTmp(t)), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// run is how a command run to completion ended.
type run struct {
	code           int
	stdout, stderr string
}

// fixpoint runs the binary to completion.
func fixpoint(t testing.TB, timeout time.Duration, args ...string) run {
	t.Helper()
	return runFixpoint(t, timeout, "", nil, args...)
}

// runFixpoint runs the binary to completion in dir ("" for here) with
// extra environment variables, and returns its exit code and output; it
// fails the test only when the binary could not run at all.
func runFixpoint(t testing.TB, timeout time.Duration, dir string, env []string, args ...string) run {
	t.Helper()
	return runArgv(t, timeout, dir, env, append([]string{fixpointBin(t)}, args...)...)
}

// runArgv is runFixpoint for a full argv.
func runArgv(t testing.TB, timeout time.Duration, dir string, env []string, argv ...string) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := command(ctx, t, env, argv...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", argv[1:], err)
	}
	return run{code, stdout.String(), stderr.String()}
}

// proc is a fixpoint process running in the background; done closes once
// it has exited and been reaped.
type proc struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

// syncBuffer is a bytes.Buffer safe to read while a process writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startProc starts the binary with args in the background; t's cleanup
// kills it.
func startProc(t *testing.T, args ...string) *proc {
	t.Helper()
	return start(t, t, nil, append([]string{fixpointBin(t)}, args...)...)
}

// start starts argv in the background with env added, for t; owner's
// cleanup kills it and owner's TMPDIR is its, so that a process a subtest
// starts can outlive it.
func start(t, owner *testing.T, env []string, argv ...string) *proc {
	t.Helper()
	out := &syncBuffer{}
	cmd := command(context.Background(), owner, env, argv...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, out: out, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	owner.Cleanup(p.kill)
	return p
}

// exited says whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill kills the process the hard way (SIGKILL) and reaps it.
func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// stop asks the process to end (SIGTERM) and waits until it has.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.kill()
		t.Fatalf("%s did not stop on SIGTERM:\n%s", filepath.Base(p.cmd.Args[0]), p.out)
	}
}

// upProc is an `up` running in the background on its data dir.
type upProc struct {
	*proc
	data string
}

// startUp starts `up -f env` on data in the background, with flags; it
// does not wait. A killed up leaves its address behind: it is removed
// first, so that whoever waits finds this up's.
func startUp(t *testing.T, data, env string, flags ...string) *upProc {
	t.Helper()
	_ = os.Remove(filepath.Join(data, endpointFile))
	return &upProc{startProc(t, append([]string{"up", "-f", env, "--data-dir", data}, flags...)...), data}
}

// waitConverged waits, within the given time, until the up reports the
// fixed point, and returns its status.
func (p *upProc) waitConverged(t *testing.T, within time.Duration) *engine.Status {
	t.Helper()
	var st *engine.Status
	rafttest.Eventually(t, within, "up converged", func() error {
		if p.exited() {
			t.Fatalf("up exited early:\n%s", p.out)
		}
		if st = statusOf(t, p.data); st == nil || !st.Converged {
			return fmt.Errorf("not converged: %s\n%s", jsonString(st), p.out)
		}
		return nil
	})
	return st
}

// upClient is an API client for the up (or server) whose data dir is
// data, as it published itself there; nil while it has not.
func upClient(t testing.TB, data string) *api.Client {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(data, endpointFile))
	if err != nil {
		return nil
	}
	var e endpoint
	if json.Unmarshal(b, &e) != nil {
		return nil
	}
	hc, err := (&tlsFlags{ca: e.CA}).httpClient()
	if err != nil {
		t.Fatalf("client for %s: %v", data, err)
	}
	return api.NewClient([]string{e.Addr}, e.Token, hc)
}

// statusOf reads the status of the up whose data dir is data; nil while
// it is not answering.
func statusOf(t testing.TB, data string) *engine.Status {
	t.Helper()
	c := upClient(t, data)
	if c == nil {
		return nil
	}
	return statusFrom(c)
}

// statusFrom reads the status through c; nil when nobody answers.
func statusFrom(c *api.Client) *engine.Status {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := c.Status(ctx, false, 0, 0)
	if err != nil {
		return nil
	}
	return st
}

// statusJSON reads `status --format json` of the up on dataDir, through
// the CLI, and fails t unless it answers.
func statusJSON(t *testing.T, dataDir string) *engine.Status {
	t.Helper()
	r := fixpoint(t, time.Minute, "status", "--format", "json", "--data-dir", dataDir)
	if r.code != 0 {
		t.Fatalf("status exited %d: %s", r.code, r.stderr)
	}
	var st engine.Status
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("status JSON: %v\n%s", err, r.stdout)
	}
	return &st
}

// readFile is a file's content, trimmed.
func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// readEndpoint is the API address the up or server on data published.
func readEndpoint(t testing.TB, data string) string {
	t.Helper()
	var e endpoint
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(data, endpointFile))), &e); err != nil {
		t.Fatal(err)
	}
	return e.Addr
}

// waitFile waits until path exists, failing with p's output.
func waitFile(t *testing.T, p *proc, what, path string) {
	t.Helper()
	rafttest.Eventually(t, time.Minute, what, func() error {
		if p.exited() {
			t.Fatalf("%s: the process exited:\n%s", what, p.out)
		}
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("%v\n%s", err, p.out)
		}
		return nil
	})
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// holds is a condition's answer to rafttest.Eventually: nil when ok, else
// what was seen instead.
func holds(ok bool, seen string) error {
	if ok {
		return nil
	}
	return errors.New(seen)
}

// converges is how long an up of a small environment is given to reach
// the fixed point: generous on a loaded machine.
const converges = 3 * time.Minute

// writeFiles writes a charm's files under dir, by path relative to it,
// each executable (hooks need to be; the rest do not mind).
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}
