//go:build unix

package hooktool

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// dial connects to the unix socket at path with blocking I/O bounded by
// timeout. It uses syscall rather than net: importing net links its cgo
// resolver, which makes the tool a dynamically linked binary that pays the
// dynamic loader on every call — more than the call itself.
func dial(path string, timeout time.Duration) (*os.File, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	syscall.CloseOnExec(fd)
	tv := syscall.NsecToTimeval(timeout.Nanoseconds())
	for _, opt := range []int{syscall.SO_RCVTIMEO, syscall.SO_SNDTIMEO} {
		if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, opt, &tv); err != nil {
			syscall.Close(fd)
			return nil, fmt.Errorf("socket timeout: %w", err)
		}
	}
	for {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path})
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("connect %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}
