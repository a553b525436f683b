package hooktool

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ioTimeout bounds connecting to the run's socket, sending the request and
// reading the answer; the server answers within its own 30 s budget.
const ioTimeout = 40 * time.Second

// ProgramName is the name of the program behind the tools, as installed
// by `go install ./cmd/...` and as the agent builds it.
const ProgramName = "fixpoint-hook"

// Command is main for the program behind the tools: argv[0]'s base name
// is the tool. Run under its own name it answers --protocol (the agent's
// check that it speaks this protocol) and refuses anything else.
func Command(argv []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(argv) == 0 {
		fmt.Fprintf(stderr, "ERROR %s: no program name\n", ProgramName)
		return ExitUsage
	}
	name := filepath.Base(argv[0])
	if name != ProgramName {
		return Main(name, argv[1:], stdin, stdout, stderr)
	}
	if len(argv) == 2 && argv[1] == "--protocol" {
		fmt.Fprintln(stdout, ProtocolVersion)
		return 0
	}
	fmt.Fprintf(stderr, "ERROR %s is the program behind the Juju hook tools: hooks run by fixpoint call it as relation-get, config-get, ... through links on their PATH; run alone it only answers --protocol\n", ProgramName)
	return ExitUsage
}

// Main is the hook tool called name: it sends args (and, for relation-set
// --file, the file's content, read here where the hook's working directory
// and permissions apply) to the run that started the hook, prints what
// comes back and returns the exit code. Whether name is a tool at all is
// the server's to say: it knows the tools this fixpoint serves.
func Main(name string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "ERROR "+format+"\n", a...)
		return ExitFailed
	}
	socket, token := os.Getenv(EnvSocket), os.Getenv(EnvToken)
	if socket == "" || token == "" {
		return fail("%s works only inside a hook run by fixpoint: %s and %s are not set", name, EnvSocket, EnvToken)
	}
	req := Request{Token: token, Context: os.Getenv(EnvContext), Tool: name, Args: args}
	if name == "relation-set" {
		if path, ok := FileArg(args); ok {
			data, err := readFileArg(path, stdin)
			if err != nil {
				return fail("%v", err)
			}
			req.File = &data
		}
	}
	resp, err := call(socket, &req)
	if err != nil {
		return fail("%s: %v", name, err)
	}
	io.WriteString(stdout, resp.Stdout)
	io.WriteString(stderr, resp.Stderr)
	return resp.Code
}

// call sends req over the unix socket at path and reads the response.
func call(path string, req *Request) (*Response, error) {
	conn, err := dial(path, ioTimeout)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the hook run: %w", err)
	}
	defer conn.Close()
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return nil, fmt.Errorf("send request: %w", err)
	}
	var resp Response
	if err := json.NewDecoder(io.LimitReader(conn, MaxResponse)).Decode(&resp); err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	return &resp, nil
}

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

// readFileArg reads a settings file, "-" meaning stdin, refusing one that
// the server would refuse as too large.
func readFileArg(path string, stdin io.Reader) (string, error) {
	var r io.Reader = stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return "", fmt.Errorf("relation-set --file %s: %w", path, err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxRequest+1))
	if err != nil {
		return "", fmt.Errorf("relation-set --file %s: %w", path, err)
	}
	if len(data) > MaxRequest {
		return "", fmt.Errorf("relation-set --file %s: larger than %d MiB, the most one tool call carries", path, MaxRequest>>20)
	}
	return string(data), nil
}
