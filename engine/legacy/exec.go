package legacy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// waitDelay is how long a hook's output is still read after the hook has
// exited, for children it left running in the background that hold its
// stdout; after that the hook counts as finished.
const waitDelay = 2 * time.Second

// stderrTail is how much of a failed hook's stderr its error carries.
const stderrTail = 2 << 10

// hookRun is one hook process to run.
type hookRun struct {
	path, dir string
	env       []string
	maxOutput int
}

// hookOutcome is what one hook process did.
type hookOutcome struct {
	output    string // stdout and stderr interleaved, capped, for the log
	truncated bool
	stderr    string // the tail of stderr, for the error
}

// run executes the hook and waits for it. The hook gets its own process
// group, so that cancelling ctx (the reconcile's timeout) kills whatever
// it started as well.
func (h *hookRun) run(ctx context.Context) (*hookOutcome, error) {
	cmd := exec.CommandContext(ctx, h.path)
	cmd.Dir = h.dir
	cmd.Env = h.env
	combined := &cappedBuffer{max: h.maxOutput}
	errTail := &tailBuffer{max: stderrTail}
	cmd.Stdout = combined
	cmd.Stderr = multiWriter{combined, errTail}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	out := &hookOutcome{output: combined.String(), truncated: combined.over, stderr: errTail.String()}
	if err == nil {
		return out, nil
	}
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	var exit *exec.ExitError
	switch {
	case errors.Is(err, exec.ErrWaitDelay):
		// The hook exited 0 but something it started still holds its
		// output: the hook is done, like Juju's.
		return out, nil
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return out, fmt.Errorf("killed by %s", ws.Signal())
		}
		return out, fmt.Errorf("exit status %d", exit.ExitCode())
	}
	return out, err
}

// cappedBuffer keeps the first max bytes written and notes the rest.
type cappedBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - c.buf.Len()
	if len(p) > room {
		c.over = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// multiWriter writes to every writer; ours never fail.
type multiWriter []interface{ Write([]byte) (int, error) }

func (m multiWriter) Write(p []byte) (int, error) {
	for _, w := range m {
		w.Write(p)
	}
	return len(p), nil
}
