package hookrun

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// container starts hook processes into jails.
type container interface {
	start(cmd *exec.Cmd, track Tracker) (jail, error)
	// String names the mechanism, for logs and docs.
	String() string
}

// containment is how this process contains hooks, decided once: a cgroup
// v2 per run when the agent may create cgroups below its own (root, or a
// systemd unit with Delegate=yes), otherwise a subreaper supervisor per
// run. FIXPOINT_HOOK_CONTAINMENT=subreaper in the agent's environment
// picks the supervisor even where cgroups work.
var containment = sync.OnceValue(func() container {
	if os.Getenv("FIXPOINT_HOOK_CONTAINMENT") == "subreaper" {
		return subreaper{}
	}
	if c, err := detectCgroup(); err == nil {
		return c
	}
	return subreaper{}
})

// Containment names how hooks are contained on this machine: "cgroup
// /sys/fs/cgroup/.../fixpoint-hooks" or "subreaper". The agent logs it.
func Containment() string { return containment().String() }

// cgroupContainer puts every run in a fresh cgroup under parent. The
// process is cloned straight into it (CLONE_INTO_CGROUP), so nothing it
// does, setsid and double forks included, gets out; ending the run is one
// write to cgroup.kill.
type cgroupContainer struct{ parent string }

func (c cgroupContainer) String() string { return "cgroup " + c.parent }

// detectCgroup finds the agent's own cgroup v2 and checks that a child
// cgroup can be made there and a process cloned into it.
func detectCgroup() (cgroupContainer, error) {
	own, err := ownCgroup()
	if err != nil {
		return cgroupContainer{}, err
	}
	c := cgroupContainer{parent: filepath.Join(own, "fixpoint-hooks")}
	if err := os.Mkdir(c.parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return cgroupContainer{}, err
	}
	sweepCgroups(c.parent)
	// The probe is this very binary, which exits at once (see shim).
	cmd := &exec.Cmd{Path: selfExe, Args: []string{probeArg0}}
	j, err := c.start(cmd, nil)
	if err != nil {
		return cgroupContainer{}, err
	}
	j.wait()
	j.kill()
	j.release()
	return c, nil
}

// sweepCgroups removes the empty run cgroups that agents killed for good
// (never restarted on their data dir) left under parent. The kernel
// refuses to remove one that holds a process; the age bound spares one
// that a concurrent agent has just made and not yet started its hook in.
func sweepCgroups(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "run-") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Minute {
			_ = os.Remove(filepath.Join(parent, e.Name()))
		}
	}
}

// ownCgroup returns the directory of this process's cgroup v2.
func ownCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	var rel string
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		if r, ok := strings.CutPrefix(line, "0::"); ok {
			rel, found = r, true
		}
	}
	if !found {
		return "", errors.New("no cgroup v2 membership")
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options... - fstype ...
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, fl := range fields {
			if fl == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+1 >= len(fields) || fields[sep+1] != "cgroup2" || len(fields) < 5 {
			continue
		}
		root, mnt := fields[3], fields[4]
		// Under a cgroup namespace the mount's root is where /proc/self/cgroup
		// paths start.
		sub, err := filepath.Rel(root, rel)
		if err != nil || strings.HasPrefix(sub, "..") {
			continue
		}
		return filepath.Join(mnt, sub), nil
	}
	return "", errors.New("no cgroup v2 mount")
}

func (c cgroupContainer) start(cmd *exec.Cmd, track Tracker) (jail, error) {
	dir := filepath.Join(c.parent, "run-"+randomID())
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make the run's cgroup: %w", err)
	}
	j := &cgroupJail{dir: dir}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		j.release()
		return nil, fmt.Errorf("open the run's cgroup: %w", err)
	}
	defer syscall.Close(fd)
	// Recorded before the start: an agent that dies right after it still
	// leaves a note of where to look.
	if track != nil {
		if err := track.Track(Leftover{Cgroup: dir}); err != nil {
			j.release()
			return nil, err
		}
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.UseCgroupFD = true
	cmd.SysProcAttr.CgroupFD = fd
	if err := startRetrying(cmd); err != nil {
		j.release()
		if track != nil {
			_ = track.Track(Leftover{})
		}
		return nil, err
	}
	j.cmd = cmd
	return j, nil
}

type cgroupJail struct {
	dir string
	cmd *exec.Cmd
}

func (j *cgroupJail) wait() exit {
	// Every stdio of cmd is an *os.File (see Start): Wait returns when the
	// hook exits, whoever still holds its output.
	err := j.cmd.Wait()
	var ee *exec.ExitError
	if err == nil || errors.As(err, &ee) {
		return exit{status: j.cmd.ProcessState.Sys().(syscall.WaitStatus)}
	}
	return exit{err: err}
}

func (j *cgroupJail) kill() { endCgroup(j.dir) }

func (j *cgroupJail) release() { removeCgroup(j.dir) }

// removeCgroup removes an emptied cgroup, and any a hook made inside it,
// deepest first.
func removeCgroup(dir string) {
	var dirs []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.Remove(dirs[i])
	}
}

// endCgroup kills every process in the cgroup dir and waits, up to
// killGrace, until it is empty.
func endCgroup(dir string) {
	killed := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) == nil
	deadline := time.Now().Add(killGrace)
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		pids, err := cgroupPids(dir)
		if err != nil || len(pids) == 0 {
			return
		}
		if !killed {
			// Kernels before 5.14 have no cgroup.kill: kill what is there,
			// again and again, until forks stop winning.
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(delay)
	}
}

// cgroupPids lists the processes in a cgroup and all its children.
func cgroupPids(dir string) ([]int, error) {
	var pids []int
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		if err != nil {
			return err
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	return pids, err
}

func randomID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// startRetrying starts cmd, retrying while the executable is "busy": a
// hook just unpacked can still be open for writing in a child forked
// meanwhile by another goroutine, until that child execs (golang/go#22315).
func startRetrying(cmd *exec.Cmd) error {
	delay := 5 * time.Millisecond
	for i := 0; ; i++ {
		err := cmd.Start()
		if err == nil || !errors.Is(err, syscall.ETXTBSY) || i == 8 {
			return err
		}
		time.Sleep(delay)
		delay *= 2
		// A failed Start leaves cmd unusable: start a fresh copy.
		fresh := &exec.Cmd{Path: cmd.Path, Args: cmd.Args, Dir: cmd.Dir, Env: cmd.Env, Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr, ExtraFiles: cmd.ExtraFiles, SysProcAttr: cmd.SysProcAttr}
		*cmd = *fresh
	}
}
