package hookrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Proc is one hook process started contained: every process it starts,
// including those that leave its process group or session (`setsid sleep
// 900 &`), stays in one place — a cgroup v2 of its own where the machine
// offers one, otherwise under a supervisor that is their child subreaper —
// and is ended with the run.
type Proc struct {
	cmd    *exec.Cmd
	jail   jail
	track  Tracker
	copies sync.WaitGroup
}

// StartError is a hook that could not be started at all.
type StartError struct{ Err error }

func (e *StartError) Error() string { return e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// Start starts cmd contained. cmd's Stdin, Stdout and Stderr may be any
// reader or writers: Start connects them through pipes of its own, so that
// the run ends when the hook exits, not when the last process that
// inherited its stdout closes it. track, if not nil, is told where the
// run's processes are (and told Leftover{} once they are gone), so that an
// agent restarted after a crash can end them.
func Start(cmd *exec.Cmd, track Tracker) (*Proc, error) {
	p := &Proc{cmd: cmd, track: track}
	var parentEnds, childEnds []*os.File
	closeAll := func() {
		for _, f := range append(parentEnds, childEnds...) {
			f.Close()
		}
	}
	if r := cmd.Stdin; r != nil {
		if _, ok := r.(*os.File); !ok {
			pr, pw, err := os.Pipe()
			if err != nil {
				return nil, fmt.Errorf("stdin pipe: %w", err)
			}
			cmd.Stdin, parentEnds, childEnds = pr, append(parentEnds, pw), append(childEnds, pr)
			p.copies.Add(1)
			defer func() {
				go func() {
					defer p.copies.Done()
					// A hook that does not read its input closes the pipe
					// by exiting: the write fails, which is fine.
					_, _ = io.Copy(pw, r)
					pw.Close()
				}()
			}()
		}
	}
	for _, w := range []*io.Writer{&cmd.Stdout, &cmd.Stderr} {
		if *w == nil {
			continue
		}
		if _, ok := (*w).(*os.File); ok {
			continue
		}
		pr, pw, err := os.Pipe()
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("output pipe: %w", err)
		}
		dst := *w
		*w, parentEnds, childEnds = pw, append(parentEnds, pr), append(childEnds, pw)
		p.copies.Add(1)
		defer func() {
			go func() {
				defer p.copies.Done()
				_, _ = io.Copy(dst, pr)
				pr.Close()
			}()
		}()
	}
	j, err := containment().start(cmd, track)
	for _, f := range childEnds {
		f.Close()
	}
	if err != nil {
		for _, f := range parentEnds {
			f.Close()
		}
		// The deferred copiers still run; with every end closed they
		// return at once.
		return nil, &StartError{Err: err}
	}
	p.jail = j
	return p, nil
}

// Wait waits until the hook exits or ctx ends (then it kills the hook);
// either way it ends every process of the run and reads the rest of the
// output before it returns. It returns the hook's wait status, and
// ctx.Err() when ctx ended the run, or a *StartError when a supervisor
// could not start the hook.
func (p *Proc) Wait(ctx context.Context) (syscall.WaitStatus, error) {
	exited := make(chan exit, 1)
	go func() { exited <- p.jail.wait() }()
	var (
		res    exit
		ctxErr error
	)
	select {
	case res = <-exited:
	case <-ctx.Done():
		ctxErr = ctx.Err()
		p.jail.kill()
		res = <-exited
	}
	// The hook is gone; whatever it left behind goes with the run.
	p.jail.kill()
	p.jail.release()
	if p.track != nil {
		_ = p.track.Track(Leftover{})
	}
	p.copies.Wait()
	if ctxErr != nil {
		return res.status, ctxErr
	}
	return res.status, res.err
}

// exit is how the hook ended, as its jail saw it.
type exit struct {
	status syscall.WaitStatus
	err    error
}

// jail keeps the processes of one run.
type jail interface {
	// wait returns when the hook itself exits.
	wait() exit
	// kill ends every process of the run and returns once they are gone
	// (or after a bound, for processes the kernel will not end).
	kill()
	// release frees what the jail holds (a cgroup directory).
	release()
}

// killGrace bounds how long ending a run's processes is waited for: a
// process stuck in uninterruptible sleep is not waited for forever.
const killGrace = 10 * time.Second

// errHookLost is a hook whose supervisor ended without saying how the
// hook ended.
var errHookLost = errors.New("hook supervisor ended without the hook's exit status")
