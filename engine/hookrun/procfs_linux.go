package hookrun

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stat returns the parent and start time (clock ticks since boot) of pid
// from /proc/pid/stat.
func stat(pid int) (ppid int, start uint64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	// The command name is in parentheses and may hold anything, spaces
	// and parentheses too: the fields start after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state): ppid is field 4, starttime field 22.
	if len(f) < 20 {
		return 0, 0, errors.New("malformed /proc stat")
	}
	if ppid, err = strconv.Atoi(f[1]); err != nil {
		return 0, 0, err
	}
	start, err = strconv.ParseUint(f[19], 10, 64)
	return ppid, start, err
}

// startTime tells a process from a later one that reuses its pid.
func startTime(pid int) (uint64, error) {
	_, st, err := stat(pid)
	return st, err
}

// descendants lists every process below root, from a scan of /proc.
func descendants(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _, err := stat(pid); err == nil {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// killDescendants sends SIGKILL to every process below root.
func killDescendants(root int) {
	if root == os.Getpid() && !hasChildren() {
		// The usual end of a run: the hook left nothing. A subreaper with
		// no children has no descendants; skip the scan of /proc.
		return
	}
	for _, pid := range descendants(root) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// hasChildren says whether this process has children, from
// /proc/self/task/*/children; true when the kernel does not say.
func hasChildren() bool {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return true
	}
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil || len(strings.TrimSpace(string(b))) > 0 {
			return true
		}
	}
	return false
}

// endTree kills everything below root, then root, and waits up to
// killGrace for them to go. Root (a subreaper supervisor) dies last: while
// it lives, whatever it supervises stays below it, where it can be found,
// and it reaps them; killed at once, it would hand processes that are
// still dying over to init.
func endTree(root int) {
	deadline := time.Now().Add(killGrace)
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		below := descendants(root)
		for _, pid := range below {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		late := time.Now().After(deadline)
		rootAlive := false
		if _, _, err := stat(root); err == nil && !zombie(root) {
			rootAlive = true
			if len(below) == 0 || late {
				_ = syscall.Kill(root, syscall.SIGKILL)
			}
		}
		if (len(below) == 0 && !rootAlive) || late {
			return
		}
		time.Sleep(delay)
	}
}

// zombie says whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && strings.HasPrefix(s[i+1:], " Z")
}
