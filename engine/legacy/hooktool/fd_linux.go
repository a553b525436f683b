package hooktool

import "syscall"

// Exec is main for the program behind the tools: the tool argv[0] names,
// with the process's arguments and standard streams; it does not return.
// On Linux it reads its arguments from /proc and its streams with plain
// system calls rather than through package os, whose start-up every call
// would pay (see the package comment).
func Exec() {
	syscall.Exit(Command(procArgs(), fdReader(0), fdWriter(1), fdWriter(2)))
}

// procArgs is the process's argv, from /proc/self/cmdline.
func procArgs() []string {
	fd, err := openRead("/proc/self/cmdline")
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	data, err := readAll(fdReader(fd), 1<<20)
	if err != nil {
		return nil
	}
	var args []string
	for len(data) > 0 {
		i := 0
		for i < len(data) && data[i] != 0 {
			i++
		}
		args = append(args, string(data[:i]))
		if i == len(data) {
			break
		}
		data = data[i+1:]
	}
	return args
}

// waitFD waits until fd, a standard stream (0, 1 or 2: in the first word
// of an FdSet on every architecture) that the hook left non-blocking, can
// be read or written.
func waitFD(fd int, write bool) error {
	for {
		var set syscall.FdSet
		set.Bits[0] |= 1 << uint(fd)
		var err error
		if write {
			_, err = syscall.Select(fd+1, nil, &set, nil, nil)
		} else {
			_, err = syscall.Select(fd+1, &set, nil, nil, nil)
		}
		if err != syscall.EINTR {
			return err
		}
	}
}
