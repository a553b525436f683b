package hookrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Tracker is told where a run's processes are (Leftover{} once they are
// gone), so that they can be found again after the agent dies.
type Tracker interface {
	Track(Leftover) error
}

// Leftover is where the processes of a run that may still be running are:
// its cgroup, or its supervisor (pid and start time, so that a later
// process that reuses the pid is never taken for it).
type Leftover struct {
	Cgroup string `json:"cgroup,omitempty"`
	Pid    int    `json:"pid,omitempty"`
	Start  uint64 `json:"start,omitempty"`
}

// End ends whatever of a recorded run still runs and returns once it is
// gone (or after killGrace for processes the kernel will not end).
func (l Leftover) End() {
	if l.Cgroup != "" {
		if _, err := os.Stat(l.Cgroup); err == nil {
			endCgroup(l.Cgroup)
			removeCgroup(l.Cgroup)
		}
	}
	if l.Pid > 0 {
		if st, err := startTime(l.Pid); err == nil && st == l.Start {
			// Its agent is gone, so its lifeline is closed and it is
			// already ending the run; endTree makes sure.
			endTree(l.Pid)
		}
	}
}

// UnitLock is one unit's run lock: an flock on a file in the agent's data
// dir, held while one of the unit's runs is going, which also records
// where that run's processes are. It keeps two runs of one unit from
// overlapping even across agent restarts, as Juju's machine lock does: the
// lock of a dead agent is free, and whoever takes it next first ends what
// the dead agent's run left running.
type UnitLock struct {
	f *os.File
}

// lockDir is where the unit locks are, in the agent's data dir.
func lockDir(dataDir string) string { return filepath.Join(dataDir, "locks") }

// LockUnit takes unit's lock, waiting while another process holds it,
// until ctx ends; it ends the leftovers of the unit's previous run first.
func LockUnit(ctx context.Context, dataDir, unit string) (*UnitLock, error) {
	if unit == "" || strings.ContainsAny(unit, "\x00") || strings.Contains(unit, "..") {
		return nil, fmt.Errorf("lock unit %q: not a unit name", unit)
	}
	dir := lockDir(dataDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("lock unit %s: %w", unit, err)
	}
	path := filepath.Join(dir, strings.ReplaceAll(unit, "/", "-")+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock unit %s: %w", unit, err)
	}
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock unit %s: %w", unit, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock unit %s: another run of it holds %s: %w", unit, path, ctx.Err())
		case <-time.After(delay):
		}
	}
	l := &UnitLock{f: f}
	l.endLeftover()
	return l, nil
}

// endLeftover ends the run the lock file records, if any, and clears it.
func (l *UnitLock) endLeftover() {
	b, err := io.ReadAll(io.NewSectionReader(l.f, 0, 1<<16))
	if err != nil || len(b) == 0 {
		return
	}
	var left Leftover
	if json.Unmarshal(b, &left) == nil {
		left.End()
	}
	_ = l.Track(Leftover{})
}

// Track records where the unit's current run is; Leftover{} clears it.
func (l *UnitLock) Track(left Leftover) error {
	var b []byte
	if left != (Leftover{}) {
		b, _ = json.Marshal(left)
	}
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("record run in %s: %w", l.f.Name(), err)
	}
	if _, err := l.f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("record run in %s: %w", l.f.Name(), err)
	}
	return nil
}

// Unlock releases the lock.
func (l *UnitLock) Unlock() {
	_ = l.f.Close() // closing the only descriptor drops the flock
}

// EndLeftovers ends what runs of a dead agent on dataDir left running, for
// every unit whose lock nobody holds: an agent calls it on start, before it
// runs anything, so that units removed while it was down are ended too.
func EndLeftovers(dataDir string) error {
	entries, err := os.ReadDir(lockDir(dataDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("end leftover hook runs: %w", err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		f, err := os.OpenFile(filepath.Join(lockDir(dataDir), e.Name()), os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			f.Close() // a live agent's run holds it
			continue
		}
		(&UnitLock{f: f}).endLeftover()
		f.Close()
	}
	return nil
}
