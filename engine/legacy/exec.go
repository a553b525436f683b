package legacy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/fixpoint/fixpoint/engine/hookrun"
	"github.com/fixpoint/fixpoint/engine/legacy/shebang"
)

// stderrTail is how much of a failed hook's stderr its error carries.
const stderrTail = 2 << 10

// hookRun is one hook process to run.
type hookRun struct {
	path, dir string
	env       []string
	maxOutput int
	track     hookrun.Tracker
	// shell is fixpoint-sh, which runs a POSIX sh hook instead of the
	// system shell; "" runs every hook as its own executable.
	shell string
	// toolsDir holds the hook tools' links: fixpoint-sh runs a command
	// found there as a builtin.
	toolsDir string
	// args are the process's arguments after path; stdout and stderr,
	// when set, get its output too (an action's, exec's).
	args           []string
	stdout, stderr io.Writer
}

// hookOutcome is what one hook process did.
type hookOutcome struct {
	output    string // stdout and stderr interleaved, capped, for the log
	truncated bool
	stderr    string // the tail of stderr, for the error
	// code is the exit status; -1 for a process that did not exit by
	// itself or did not start.
	code int
}

// run executes the hook and waits for it. hookrun contains it: whatever
// it starts, in its process group or not, is ended when it exits or ctx
// ends (the hook's timeout), and its output is read when it exits, not
// when the last process that inherited it lets go.
func (h *hookRun) run(ctx context.Context) (*hookOutcome, error) {
	cmd := exec.Command(h.path, h.args...)
	if h.shell != "" && len(h.args) == 0 && posixHook(h.path) {
		// Started exactly as the hook would be, the interpreter its
		// process: same containment, environment, directory and output.
		cmd = exec.Command(h.shell, "--tools", h.toolsDir, "--", h.path)
	}
	cmd.Dir = h.dir
	cmd.Env = h.env
	combined := &cappedBuffer{max: h.maxOutput}
	errTail := &tailBuffer{max: stderrTail}
	cmd.Stdout = combined
	cmd.Stderr = multiWriter{combined, errTail}
	if h.stdout != nil {
		cmd.Stdout = multiWriter{combined, h.stdout}
	}
	if h.stderr != nil {
		cmd.Stderr = multiWriter{combined, errTail, h.stderr}
	}
	proc, err := hookrun.Start(cmd, h.track)
	if err != nil {
		return &hookOutcome{code: -1}, err
	}
	ws, err := proc.Wait(ctx)
	out := &hookOutcome{output: combined.String(), truncated: combined.over, stderr: errTail.String()}
	out.code = -1
	switch {
	case err != nil:
		return out, err
	case ws.Signaled():
		return out, fmt.Errorf("killed by %s", ws.Signal())
	}
	out.code = ws.ExitStatus()
	if out.code != 0 {
		return out, fmt.Errorf("exit status %d", out.code)
	}
	return out, nil
}

// posixHook says whether the hook at path starts with a POSIX sh shebang
// fixpoint-sh runs; a hook it cannot read runs as before, to fail as it
// would.
func posixHook(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var buf [128]byte
	n, _ := io.ReadFull(f, buf[:])
	line, _, _ := bytes.Cut(buf[:n], []byte("\n"))
	_, ok := shebang.POSIX(string(line))
	return ok
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
