package hookrun

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Where no cgroup may be made, every run gets a supervisor: this very
// binary started under another name, which makes itself the child
// subreaper of everything below it (PR_SET_CHILD_SUBREAPER), starts the
// hook, reports the hook's exit status the moment the hook exits, and then
// kills and reaps every process left below it. A process that leaves its
// process group and session (`setsid sleep 900 &`) is still re-parented to
// the supervisor, not to init, so nothing a hook starts gets out. The
// supervisor also ends the run when its lifeline, a pipe whose other end
// only the agent holds, closes: when the agent kills the run, or dies.
//
// One supervisor per run rather than the agent itself as the subreaper:
// orphans re-parented to a shared agent could not be told apart by run.

const (
	// shimArg0 is argv[0] of a supervisor.
	shimArg0 = "fixpoint-hook-supervisor"
	// probeArg0 is argv[0] of the cgroup probe, which exits at once.
	probeArg0 = "fixpoint-hook-probe"
	// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER (not in
	// syscall for every architecture).
	prSetChildSubreaper = 36
	// selfExe is this binary, even when it was replaced on disk meanwhile.
	selfExe = "/proc/self/exe"
)

// init turns any binary that links hookrun (the fixpoint agent, test
// binaries) into a supervisor or probe when started under those names. It
// must run before main: the supervisor never returns to it.
func init() {
	switch filepath.Base(os.Args[0]) {
	case probeArg0:
		os.Exit(0)
	case shimArg0:
		os.Exit(supervise(os.Args[1:]))
	}
}

type subreaper struct{}

func (subreaper) String() string { return "subreaper" }

func (subreaper) start(cmd *exec.Cmd, track Tracker) (jail, error) {
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("supervisor lifeline: %w", err)
	}
	statR, statW, err := os.Pipe()
	if err != nil {
		lifeR.Close()
		lifeW.Close()
		return nil, fmt.Errorf("supervisor status pipe: %w", err)
	}
	shim := &exec.Cmd{
		Path: selfExe, Args: append([]string{shimArg0, cmd.Path}, cmd.Args[1:]...),
		Dir: cmd.Dir, Env: cmd.Env, Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr,
		ExtraFiles:  []*os.File{lifeR, statW},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	err = shim.Start()
	lifeR.Close()
	statW.Close()
	if err != nil {
		lifeW.Close()
		statR.Close()
		return nil, fmt.Errorf("start the hook supervisor: %w", err)
	}
	j := &shimJail{cmd: shim, life: lifeW, status: statR, done: make(chan struct{})}
	go func() {
		_ = shim.Wait()
		close(j.done)
	}()
	if track != nil {
		if st, err := startTime(shim.Process.Pid); err == nil {
			_ = track.Track(Leftover{Pid: shim.Process.Pid, Start: st})
		}
	}
	return j, nil
}

type shimJail struct {
	cmd      *exec.Cmd
	life     *os.File
	status   *os.File
	done     chan struct{}
	killOnce sync.Once
}

func (j *shimJail) wait() exit {
	line, err := bufio.NewReader(j.status).ReadString('\n')
	if err != nil {
		return exit{err: errHookLost}
	}
	kind, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch kind {
	case "x":
		n, err := strconv.ParseUint(arg, 10, 32)
		if err != nil {
			return exit{err: fmt.Errorf("hook supervisor: bad status %q", line)}
		}
		return exit{status: syscall.WaitStatus(n)}
	case "e":
		return exit{err: &StartError{Err: errors.New(arg)}}
	}
	return exit{err: fmt.Errorf("hook supervisor: bad status %q", line)}
}

func (j *shimJail) kill() {
	j.killOnce.Do(func() {
		// The supervisor kills everything below it when the lifeline closes.
		j.life.Close()
		select {
		case <-j.done:
		case <-time.After(killGrace):
			// A supervisor that does not finish is ended from outside,
			// what it supervises first.
			endTree(j.cmd.Process.Pid)
			<-j.done
		}
	})
}

func (j *shimJail) release() { j.status.Close() }

// supervise is the supervisor's main: args are the hook's path and
// arguments; fd 3 is the lifeline, fd 4 where the hook's exit is reported.
func supervise(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, shimArg0+": no hook to run")
		return 2
	}
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	life, status := os.NewFile(3, "lifeline"), os.NewFile(4, "status")
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		fmt.Fprintf(status, "e become the hook's subreaper: %v\n", e)
		return 1
	}
	var (
		pid int
		err error
	)
	for i, delay := 0, 5*time.Millisecond; ; i, delay = i+1, 2*delay {
		pid, err = syscall.ForkExec(args[0], args, &syscall.ProcAttr{
			Env: os.Environ(), Files: []uintptr{0, 1, 2}, Sys: &syscall.SysProcAttr{Setpgid: true},
		})
		if err == nil || !errors.Is(err, syscall.ETXTBSY) || i == 8 {
			break
		}
		time.Sleep(delay)
	}
	if err != nil {
		fmt.Fprintf(status, "e fork/exec %s: %v\n", args[0], err)
		return 1
	}
	// The hook holds its stdio now; the supervisor must not keep the
	// agent's pipes open.
	if null, err := syscall.Open(os.DevNull, syscall.O_RDWR, 0); err == nil {
		for fd := 0; fd <= 2; fd++ {
			_ = syscall.Dup3(null, fd, 0)
		}
		syscall.Close(null)
	}
	var ending atomic.Bool
	self := os.Getpid()
	go func() {
		var b [1]byte
		_, _ = life.Read(b[:])
		ending.Store(true)
		killDescendants(self)
	}()
	hookDone := false
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 0 // ECHILD: nothing of the run is left
		}
		if wpid == pid {
			fmt.Fprintf(status, "x %d\n", uint32(ws))
			status.Close()
			hookDone = true
		}
		if hookDone || ending.Load() {
			killDescendants(self)
		}
	}
}
