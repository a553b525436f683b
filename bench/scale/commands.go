package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/fixpoint/fixpoint/bench/internal/proc"
)

// cmdRun is one operator command's process: wall and CPU seconds, peak
// resident memory.
type cmdRun struct {
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_s"`
	PeakRSSMiB float64 `json:"peak_rss_mib"`
}

// ref is -ref.
var ref string

// timeCommand runs bin's operator command args against addrs and measures
// it; it must succeed (plan: find nothing to change). Its peak resident
// memory is read from /proc while it runs (VmHWM): the rusage of a child
// counts the memory of the process it was forked from, here this bench's.
func timeCommand(bin, dir string, addrs []string, args ...string) *cmdRun {
	cmd := exec.Command(bin, append(append(args, "--controller", strings.Join(addrs, ","), "--data-dir", dir), secure.ClientFlags()...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	check(cmd.Start())
	peak := 0.0
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	var err error
wait:
	for {
		select {
		case err = <-exited:
			break wait
		case <-tick.C:
			peak = max(peak, proc.PeakRSS(cmd.Process.Pid))
		}
	}
	wall := time.Since(start)
	if err != nil {
		check(fmt.Errorf("%s %s at the fixed point: %v\n%s", bin, strings.Join(args, " "), err, proc.Tail(out.String(), 2000)))
	}
	r := &cmdRun{Seconds: wall.Seconds(), PeakRSSMiB: peak}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.CPUSeconds = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	return r
}

// timeCommands times plan, as apply's first step, and the reads of one
// unit and one service, with bin and with -ref's binary, against the
// cluster at addrs at its fixed point.
func timeCommands(sum *summary, bin, dir, envPath string, addrs []string) {
	fmt.Printf("%-24s %-8s %-8s %-8s %s\n", "at the fixed point", "wall s", "CPU s", "RSS MiB", "binary")
	for _, c := range []struct {
		name      string
		args      []string
		head, ref **cmdRun
	}{
		{"plan", []string{"plan", "-f", envPath}, &sum.Plan, &sum.PlanRef},
		{"show-unit db0/0", []string{"show-unit", "db0/0"}, &sum.ShowUnit, &sum.ShowUnitRef},
		{"config db0", []string{"config", "db0"}, &sum.Config, &sum.ConfigRef},
	} {
		for _, b := range []struct {
			bin string
			out **cmdRun
		}{{bin, c.head}, {ref, c.ref}} {
			if b.bin == "" {
				continue
			}
			r := timeCommand(b.bin, dir, addrs, c.args...)
			*b.out = r
			fmt.Printf("%-24s %-8.2f %-8.2f %-8.0f %s\n", c.name, r.Seconds, r.CPUSeconds, r.PeakRSSMiB, b.bin)
		}
	}
}
