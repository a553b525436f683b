package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// proc is one process the bench runs and may kill, stop and start again
// with the same arguments: a server or an agent.
type proc struct {
	name string
	bin  string
	args []string
	env  []string
	// ns is the network namespace to run it in ("" for the bench's own).
	ns  string
	log string

	cmd  *exec.Cmd
	done chan struct{}
	// paused is set while the process is SIGSTOPped.
	paused bool
}

// start runs the process; its output goes to its log, appended to across
// restarts.
func (p *proc) start() error {
	out, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	defer out.Close()
	fmt.Fprintf(out, "--- chaos: start %s at %s\n", p.name, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(p.bin, p.args...)
	if p.ns != "" {
		// ip execs the program in the namespace: the pid is the program's.
		cmd = exec.Command("ip", append([]string{"netns", "exec", p.ns, p.bin}, p.args...)...)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), p.env...)
	// A bench killed before it can stop them takes its children along.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	p.cmd, p.done, p.paused = cmd, done, false
	return nil
}

// alive reports whether the process runs (stopped counts as running).
func (p *proc) alive() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// pid is the running process's id, 0 when none runs.
func (p *proc) pid() int {
	if !p.alive() {
		return 0
	}
	return p.cmd.Process.Pid
}

// exited says how the last run ended, "" while it runs.
func (p *proc) exited() string {
	if p.cmd == nil || p.alive() {
		return ""
	}
	return p.cmd.ProcessState.String()
}

// kill9 ends the process with SIGKILL and waits for it.
func (p *proc) kill9() {
	if !p.alive() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	p.paused = false
}

// pause and resume stop and continue the process.
func (p *proc) pause() error {
	if !p.alive() {
		return fmt.Errorf("pause %s: not running", p.name)
	}
	p.paused = true
	return p.cmd.Process.Signal(syscall.SIGSTOP)
}

func (p *proc) resume() {
	if p.alive() {
		_ = p.cmd.Process.Signal(syscall.SIGCONT)
	}
	p.paused = false
}

// stop ends the process with SIGTERM, then SIGKILL after grace.
func (p *proc) stop(grace time.Duration) {
	if !p.alive() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.kill9()
	}
}
