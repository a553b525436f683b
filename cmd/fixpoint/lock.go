package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// upLockFile in a data dir is held (flock) by the `up` that runs on it, for
// as long as it runs: a second `up` refuses before touching anything, and
// the CLI can tell "up is starting" from "nothing runs here".
const upLockFile = "up.lock"

// dirLock is a held lock on a data dir.
type dirLock struct{ f *os.File }

// errLocked says another process holds the lock; its pid is in the message.
var errLocked = errors.New("locked")

// probeHold bounds how long lockDataDir tries again while the lock is
// taken: upRunning's probe holds it shared for an instant (a `wait`
// started beside this up), an up that runs holds it for good.
const probeHold = time.Second

// lockDataDir takes dataDir's up lock, trying again for probeHold while
// it is taken, and writes this process's pid into it for the message of
// whoever finds it taken.
func lockDataDir(dataDir string) (*dirLock, error) {
	path := filepath.Join(dataDir, upLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(probeHold)
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			if pid := lockHolder(path); pid != 0 {
				return nil, fmt.Errorf("%w by process %d", errLocked, pid)
			}
			return nil, errLocked
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &dirLock{f: f}, nil
}

// release gives the lock up; the file stays, empty of meaning.
func (l *dirLock) release() {
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
}

// lockHolder is the pid written into a lock file, or 0.
func lockHolder(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// upRunning reports whether an `up` holds dataDir's lock now.
func upRunning(dataDir string) bool {
	f, err := os.Open(filepath.Join(dataDir, upLockFile))
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
