// Package hookrun runs one hook executable as a child process: input on
// stdin and in a file, output captured and capped, an environment that
// names the unit and holds nothing of the agent's, and containment: every
// process the hook starts is ended with the run or its timeout (see Proc),
// and a per-unit lock keeps runs of one unit from overlapping across agent
// restarts (see UnitLock).
package hookrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Defaults for a Spec's limits left zero, and for every setting that
// passes them on (the --hook-timeout flags, the agent, the Juju adapter,
// the simulator).
const (
	// DefaultTimeout is how long one hook run may take before it is
	// killed.
	DefaultTimeout = 5 * time.Minute
	// DefaultMaxOutput caps a hook's stdout, in bytes.
	DefaultMaxOutput = 1 << 20
)

// Spec describes one hook run.
type Spec struct {
	// Path is the executable.
	Path string
	// Dir is the working directory: the unit's own directory.
	Dir string
	// Input goes to stdin and to the file named by InputEnv.
	Input    []byte
	InputEnv string
	// Env is the run's own variables, added to BaseEnv; nothing else of
	// the agent's environment reaches the hook.
	Env []string
	// Timeout bounds the run; default DefaultTimeout.
	Timeout time.Duration
	// MaxOutput caps stdout; a hook that prints more fails. Default
	// DefaultMaxOutput.
	MaxOutput int
	// Track, if not nil, is told where the run's processes are (a
	// *UnitLock records them for an agent restarted after a crash).
	Track Tracker
	// Stderr, if not nil, also gets stderr as it is written, whole (the
	// Outcome keeps a tail); it must not block or fail.
	Stderr io.Writer
}

// Outcome is what a run produced.
type Outcome struct {
	Stdout   []byte
	Stderr   string // the tail, for error messages and logs
	Duration time.Duration
	// Code is the exit status, -1 when the process did not exit by
	// itself.
	Code int
}

// stderrTail is how much of stderr is kept.
const stderrTail = 4 << 10

// Error is a failed run; Error() says why in a line an operator can act on.
type Error struct {
	Hook   string
	Reason string
	Stderr string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("hook %s %s", e.Hook, e.Reason)
	if tail := lastLine(e.Stderr); tail != "" {
		msg += ": " + tail
	}
	return msg
}

// Run executes spec and waits for it.
func Run(ctx context.Context, spec Spec) (*Outcome, error) {
	if spec.Timeout <= 0 {
		spec.Timeout = DefaultTimeout
	}
	if spec.MaxOutput <= 0 {
		spec.MaxOutput = DefaultMaxOutput
	}
	name := filepath.Base(spec.Path)
	// Never os.Environ(): the agent's environment holds its credentials.
	env := append(BaseEnv(), spec.Env...)
	if spec.InputEnv != "" {
		f, err := os.CreateTemp(spec.Dir, ".input-*.json")
		if err != nil {
			return nil, fmt.Errorf("hook %s: write input: %w", name, err)
		}
		defer os.Remove(f.Name())
		if _, err := f.Write(spec.Input); err != nil {
			f.Close()
			return nil, fmt.Errorf("hook %s: write input: %w", name, err)
		}
		if err := f.Close(); err != nil {
			return nil, fmt.Errorf("hook %s: write input: %w", name, err)
		}
		env = append(env, spec.InputEnv+"="+f.Name())
	}
	ctx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()
	cmd := exec.Command(spec.Path)
	cmd.Dir = spec.Dir
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(spec.Input)
	stdout := &capped{max: spec.MaxOutput}
	stderr := &tail{max: stderrTail}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if spec.Stderr != nil {
		cmd.Stderr = io.MultiWriter(stderr, spec.Stderr)
	}
	start := time.Now()
	proc, err := Start(cmd, spec.Track)
	if err != nil {
		return nil, &Error{Hook: name, Reason: "could not start: " + err.Error()}
	}
	ws, err := proc.Wait(ctx)
	out := &Outcome{Stdout: stdout.Bytes(), Stderr: stderr.String(), Duration: time.Since(start), Code: -1}
	if err == nil && !ws.Signaled() {
		out.Code = ws.ExitStatus()
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		out.Stdout = nil
		return out, &Error{Hook: name, Reason: fmt.Sprintf("timed out after %s and was killed", spec.Timeout), Stderr: out.Stderr}
	case errors.Is(err, context.Canceled):
		out.Stdout = nil
		return out, &Error{Hook: name, Reason: "was cancelled", Stderr: out.Stderr}
	case errors.As(err, new(*StartError)):
		return nil, &Error{Hook: name, Reason: "could not start: " + err.Error()}
	case err != nil:
		return out, &Error{Hook: name, Reason: err.Error(), Stderr: out.Stderr}
	case stdout.over:
		return out, &Error{Hook: name, Reason: fmt.Sprintf("printed more than %d bytes on stdout", spec.MaxOutput), Stderr: out.Stderr}
	case ws.Signaled():
		return out, &Error{Hook: name, Reason: "was killed by " + ws.Signal().String(), Stderr: out.Stderr}
	case ws.ExitStatus() != 0:
		return out, &Error{Hook: name, Reason: fmt.Sprintf("exited with status %d", ws.ExitStatus()), Stderr: out.Stderr}
	}
	return out, nil
}

// capped keeps up to max bytes and remembers whether more came. It must
// not embed bytes.Buffer: io.Copy would find Buffer.ReadFrom and write
// around the cap.
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); len(p) > room {
		c.over = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) Bytes() []byte { return c.buf.Bytes() }

// tail keeps the last max bytes written.
type tail struct {
	buf []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

func (t *tail) String() string { return string(t.buf) }

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
