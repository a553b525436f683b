// Package proc holds what the bench programs need of the machine and the
// checkout: the repository's root, to build the binaries from, and a
// process's peak resident memory.
package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// RepoRoot returns the fixpoint checkout the working directory is in.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module github.com/fixpoint/fixpoint\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run me inside the fixpoint repository (no go.mod of github.com/fixpoint/fixpoint above the working directory)")
		}
		dir = parent
	}
}

// PeakRSS is a live process's peak resident memory (VmHWM) in MiB, or 0
// if it cannot be read.
func PeakRSS(pid int) float64 { return statusMiB(pid, "VmHWM:") }

// RSS is a live process's current resident memory (VmRSS) in MiB, or 0 if
// it cannot be read.
func RSS(pid int) float64 { return statusMiB(pid, "VmRSS:") }

// statusMiB reads one kB figure of /proc/PID/status as MiB.
func statusMiB(pid int, key string) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0
			}
			kb, _ := strconv.ParseFloat(f[0], 64)
			return kb / 1024
		}
	}
	return 0
}

// CPU is a live process's CPU time in seconds: its own (user + system)
// and that of its children it has waited for (for fixpoint up, the hook
// processes), from /proc/PID/stat; zeros if it cannot be read.
func CPU(pid int) (self, children float64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	// The command name, field 2, may hold spaces: count from after it.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime, stime, cutime, cstime are fields
	// 14 to 17, in clock ticks of 1/100 s (USER_HZ on Linux).
	if len(f) < 15 {
		return 0, 0
	}
	tick := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v / 100 }
	return tick(f[11]) + tick(f[12]), tick(f[13]) + tick(f[14])
}

// Steal is the CPU time, in seconds summed over the machine's CPUs, that
// the hypervisor gave to others while this virtual machine had work for
// them (the steal column of /proc/stat); 0 where it cannot be read. On a
// shared virtual machine a few milliseconds of a core taken away land in
// whatever latency was being measured at the time, and the guest sees
// nothing of it but this count.
func Steal() float64 {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	// cpu user nice system idle iowait irq softirq steal ..., in ticks
	// of 1/100 s.
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	v, _ := strconv.ParseFloat(f[8], 64)
	return v / 100
}

// Tail is s's last n bytes: what a failed command printed last, for an
// error message.
func Tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
