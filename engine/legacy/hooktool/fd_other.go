//go:build !linux

package hooktool

import (
	"os"
	"syscall"
)

// Exec is main for the program behind the tools: the tool argv[0] names,
// with the process's arguments and standard streams; it does not return.
func Exec() {
	os.Exit(Command(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// waitFD is never needed where Exec uses package os for the standard
// streams: a non-blocking descriptor is left to os.
func waitFD(fd int, write bool) error { return syscall.EAGAIN }
