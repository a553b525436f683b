package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// fillName is the file that fills a server's disk, in its data dir.
const fillName = "chaos-fill"

// diskPossible says why the disk fault cannot run, "" when it can: each
// server's data dir on a tmpfs of its own needs root.
func (c *cluster) diskPossible(mib int) string {
	switch {
	case mib <= 0:
		return "turned off (-disk-mib=0)"
	case os.Geteuid() != 0:
		return "needs root to mount a small tmpfs per server"
	}
	probe := filepath.Join(c.root, "mount-probe")
	if err := os.MkdirAll(probe, 0o700); err != nil {
		return err.Error()
	}
	defer os.Remove(probe)
	if err := mountTmpfs(probe, 1); err != nil {
		return fmt.Sprintf("cannot mount a tmpfs: %v", err)
	}
	if err := unmountTmpfs(probe); err != nil {
		return fmt.Sprintf("cannot unmount a tmpfs: %v", err)
	}
	return ""
}

func mountTmpfs(dir string, mib int) error {
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("size=%dm,mode=0700", mib)); err != nil {
		return fmt.Errorf("mount a tmpfs of %d MiB on %s: %w", mib, dir, err)
	}
	return nil
}

func unmountTmpfs(dir string) error {
	err := unix.Unmount(dir, 0)
	if errors.Is(err, unix.EBUSY) {
		// A process still holds a file there: detach now, freed once it
		// lets go.
		err = unix.Unmount(dir, unix.MNT_DETACH)
	}
	if err != nil {
		return fmt.Errorf("unmount %s: %w", dir, err)
	}
	return nil
}

// fill writes into s's data dir until the file system is full and
// returns the bytes written.
func fill(s *server) (int64, error) {
	f, err := os.OpenFile(filepath.Join(s.dir, fillName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, fmt.Errorf("fill %s: %w", s.id, err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	var n int64
	for {
		w, err := f.Write(buf)
		n += int64(w)
		if errors.Is(err, syscall.ENOSPC) && len(buf) > 4096 {
			// The last few pages, a page at a time.
			buf = buf[:4096]
			continue
		}
		if errors.Is(err, syscall.ENOSPC) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("fill %s: %w", s.id, err)
		}
	}
}

// free removes what fill wrote.
func free(s *server) error {
	err := os.Remove(filepath.Join(s.dir, fillName))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("free %s's disk: %w", s.id, err)
	}
	return nil
}
