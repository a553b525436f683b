package hooktool

import (
	"io"
	"strconv"
	"strings"
	"syscall"
)

// ioTimeout bounds connecting to the run's socket, sending the request and
// reading the answer, in nanoseconds; the server answers within its own
// 30 s budget. (Not a time.Duration: the package avoids importing time,
// see the package comment.)
const ioTimeout = 40 * 1e9

// ProgramName is the name of the program behind the tools, as installed
// by `go install ./cmd/...` and as the agent builds it.
const ProgramName = "fixpoint-hook"

// Command is main for the program behind the tools: argv[0]'s base name
// is the tool. Run under its own name it answers --protocol (the agent's
// check that it speaks this protocol) and refuses anything else.
func Command(argv []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(argv) == 0 {
		io.WriteString(stderr, "ERROR "+ProgramName+": no program name\n")
		return ExitUsage
	}
	name := argv[0]
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if name != ProgramName {
		return Main(name, argv[1:], stdin, stdout, stderr)
	}
	if len(argv) == 2 && argv[1] == "--protocol" {
		io.WriteString(stdout, strconv.Itoa(ProtocolVersion)+"\n")
		return 0
	}
	io.WriteString(stderr, "ERROR "+ProgramName+" is the program behind the Juju hook tools: hooks run by fixpoint call it as relation-get, config-get, ... through links on their PATH; run alone it only answers --protocol\n")
	return ExitUsage
}

// Main is the hook tool called name: it sends args (and, for relation-set
// --file, the file's content, read here where the hook's working directory
// and permissions apply) to the run that started the hook, prints what
// comes back and returns the exit code. Whether name is a tool at all is
// the server's to say: it knows the tools this fixpoint serves.
func Main(name string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return Call(name, args, syscall.Getenv, "", stdin, stdout, stderr)
}

// Call is Main for a caller that is not a process of its own, such as
// fixpoint-sh's builtins: getenv reads the caller's (exported) variables
// and dir, if not empty, is its working directory, against which a
// relative relation-set --file is read.
func Call(name string, args []string, getenv func(string) (string, bool), dir string, stdin io.Reader, stdout, stderr io.Writer) int {
	fail := func(msg string) int {
		io.WriteString(stderr, "ERROR "+msg+"\n")
		return ExitFailed
	}
	socket, _ := getenv(EnvSocket)
	token, _ := getenv(EnvToken)
	if socket == "" || token == "" {
		return fail(name + " works only inside a hook run by fixpoint: " + EnvSocket + " and " + EnvToken + " are not set")
	}
	context, _ := getenv(EnvContext)
	req := Request{Token: token, Context: context, Tool: name, Args: args}
	if ReadsFile(name) {
		if path, ok := FileArg(args); ok {
			open := path
			if dir != "" && path != "-" && !strings.HasPrefix(path, "/") {
				open = dir + "/" + path
			}
			data, err := readFileArg(name, path, open, stdin)
			if err != nil {
				return fail(err.Error())
			}
			req.File = &data
		}
	}
	resp, err := keptCall(socket, &req)
	if err != nil {
		return fail(name + ": " + err.Error())
	}
	if resp.Stdout != "" {
		io.WriteString(stdout, resp.Stdout)
	}
	if resp.Stderr != "" {
		io.WriteString(stderr, resp.Stderr)
	}
	return resp.Code
}

// keptCall is call for a caller that may make many: an answer kept
// before in this hook context, and still current, is given again; an
// answer the run says may be kept is kept, until the run's write
// generation moves (keep.go).
func keptCall(path string, req *Request) (*Response, error) {
	key := readKey(path, req)
	if resp, ok := kept.answer(key); ok {
		return resp, nil
	}
	epoch, alone := kept.sending()
	resp, err := call(path, req)
	if err != nil {
		kept.forget()
		return nil, err
	}
	kept.heard(path, key, epoch, alone, resp)
	return resp, nil
}

// call sends req over the unix socket at path and reads the response: one
// JSON object each way, each on one line, on a connection kept for the
// process's next call.
func call(path string, req *Request) (*Response, error) {
	fd, err := kept.conn(path)
	if err != nil {
		return nil, &wrapped{"cannot reach the hook run", err}
	}
	resp, err := exchange(fd, req)
	if err != nil {
		syscall.Close(fd)
		return nil, err
	}
	kept.release(path, fd)
	return resp, nil
}

// exchange writes req on fd and reads its answer, which ends at the first
// newline: JSON escapes every newline within it.
func exchange(fd int, req *Request) (*Response, error) {
	if err := writeAll(fd, appendRequest(make([]byte, 0, 512), req)); err != nil {
		return nil, &wrapped{"send request", err}
	}
	data, err := readLine(fdReader(fd), MaxResponse)
	if err != nil {
		return nil, &wrapped{"read response", err}
	}
	resp, err := parseResponse(data)
	if err != nil {
		return nil, &wrapped{"read response", err}
	}
	return resp, nil
}

// ReadsFile reports whether tool takes a --file of settings that the
// client reads and sends with the call: relation-set and state-set.
func ReadsFile(tool string) bool { return tool == "relation-set" || tool == "state-set" }

// FileArg finds relation-set's --file value the way the server's parser
// will: -file or --file, "=value" or the next argument, before "--".
func FileArg(args []string) (string, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return "", false
		}
		for _, p := range []string{"--file", "-file"} {
			if a == p && i+1 < len(args) {
				return args[i+1], true
			}
			if v, ok := strings.CutPrefix(a, p+"="); ok {
				return v, true
			}
		}
	}
	return "", false
}

// readFileArg reads tool's settings file, "-" meaning stdin, refusing one
// that the server would refuse as too large; path is as the hook named it
// (for messages), open where it is.
func readFileArg(tool, path, open string, stdin io.Reader) (string, error) {
	r := stdin
	if path != "-" {
		fd, err := openRead(open)
		if err != nil {
			return "", &wrapped{tool + " --file " + path, &wrapped{"open " + path, err}}
		}
		defer syscall.Close(fd)
		r = fdReader(fd)
	}
	data, err := readAll(r, MaxRequest+1)
	if err != nil {
		return "", &wrapped{tool + " --file " + path, err}
	}
	if len(data) > MaxRequest {
		return "", &wrapped{tool + " --file " + path, errString("larger than " + strconv.Itoa(MaxRequest>>20) + " MiB, the most one tool call carries")}
	}
	return string(data), nil
}

// openRead opens path for reading, retrying when a signal interrupts.
func openRead(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// readAll reads r to its end, at most limit bytes and then stops.
func readAll(r io.Reader, limit int) ([]byte, error) {
	return readUntil(r, limit, false)
}

// readLine reads r up to a newline that ends what a read returned: the
// answer to one request, which nothing follows until the next request.
func readLine(r io.Reader, limit int) ([]byte, error) {
	return readUntil(r, limit, true)
}

func readUntil(r io.Reader, limit int, line bool) ([]byte, error) {
	buf := make([]byte, 0, 512)
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		end := min(cap(buf), limit)
		n, err := r.Read(buf[len(buf):end])
		buf = buf[:len(buf)+n]
		if line && n > 0 && buf[len(buf)-1] == '\n' {
			return buf, nil
		}
		if err == io.EOF {
			if line {
				return buf, errString("the run closed the connection before its answer ended")
			}
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	if line {
		return buf, errString("answer longer than " + strconv.Itoa(limit) + " bytes")
	}
	return buf, nil
}

// fdReader reads a file descriptor with blocking system calls.
type fdReader int

func (f fdReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := syscall.Read(int(f), p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN && f <= 2:
			// Standard input the hook made non-blocking.
			if err := waitFD(int(f), false); err != nil {
				return 0, err
			}
			continue
		case err == syscall.EAGAIN:
			// The socket's SO_RCVTIMEO passed.
			return 0, errString("timed out")
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// fdWriter writes a file descriptor with blocking system calls.
type fdWriter int

func (f fdWriter) Write(p []byte) (int, error) {
	if err := writeAll(int(f), p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeAll writes all of p to fd.
func writeAll(fd int, p []byte) error {
	for len(p) > 0 {
		n, err := syscall.Write(fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN && fd <= 2:
			// Standard output or error the hook made non-blocking.
			if err := waitFD(fd, true); err != nil {
				return err
			}
			continue
		case err == syscall.EAGAIN:
			// The socket's SO_SNDTIMEO passed.
			return errString("timed out")
		case err != nil:
			return err
		}
		p = p[n:]
	}
	return nil
}

// wrapped is an error with context, as fmt.Errorf("%s: %w") makes one.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg + ": " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }

// errString is an error that is its message.
type errString string

func (e errString) Error() string { return string(e) }
