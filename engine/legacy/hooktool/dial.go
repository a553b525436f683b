//go:build unix

package hooktool

import "syscall"

// dial connects to the unix socket at path with blocking I/O bounded by
// timeout nanoseconds. It uses syscall rather than net: importing net
// links its cgo resolver, which makes the tool a dynamically linked binary
// that pays the dynamic loader on every call — more than the call itself.
func dial(path string, timeout int64) (int, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return -1, &wrapped{"socket", err}
	}
	syscall.CloseOnExec(fd)
	tv := syscall.NsecToTimeval(timeout)
	for _, opt := range []int{syscall.SO_RCVTIMEO, syscall.SO_SNDTIMEO} {
		if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, opt, &tv); err != nil {
			syscall.Close(fd)
			return -1, &wrapped{"socket timeout", err}
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
		return -1, &wrapped{"connect " + path, err}
	}
	return fd, nil
}
