package legacy

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"
)

// dialTimeout bounds connecting to the run's socket.
const dialTimeout = 10 * time.Second

// ToolMain is the client side of the hook tool called name: it sends args
// (and, for relation-set --file, the file's content, read here where the
// hook's working directory and permissions apply) to the Run that started
// the hook, prints what comes back and returns the exit code. The fixpoint
// binary calls it when invoked under a tool's name.
func ToolMain(name string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "ERROR "+format+"\n", a...)
		return exitFailed
	}
	if !IsTool(name) {
		return fail("%s is not a hook tool; the tools are %s", name, strings.Join(ToolNames(), ", "))
	}
	socket, token := os.Getenv(EnvSocket), os.Getenv(EnvToken)
	if socket == "" || token == "" {
		return fail("%s works only inside a hook run by fixpoint: %s and %s are not set", name, EnvSocket, EnvToken)
	}
	req := request{Token: token, Context: os.Getenv(EnvContext), Tool: name, Args: args}
	if name == "relation-set" {
		if path, ok := fileArg(args); ok {
			data, err := readFileArg(path, stdin)
			if err != nil {
				return fail("%v", err)
			}
			req.File = &data
		}
	}
	conn, err := net.DialTimeout("unix", socket, dialTimeout)
	if err != nil {
		return fail("%s: cannot reach the hook run: %v", name, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(ioTimeout))
	if err := json.NewEncoder(conn).Encode(&req); err != nil {
		return fail("%s: send request: %v", name, err)
	}
	var resp response
	if err := json.NewDecoder(conn).Decode(&resp); err != nil {
		return fail("%s: read response: %v", name, err)
	}
	io.WriteString(stdout, resp.Stdout)
	io.WriteString(stderr, resp.Stderr)
	return resp.Code
}

// fileArg finds relation-set's --file value the way the server's parser
// will: -file or --file, "=value" or the next argument, before "--".
func fileArg(args []string) (string, bool) {
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

// readFileArg reads a settings file, "-" meaning stdin.
func readFileArg(path string, stdin io.Reader) (string, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(io.LimitReader(stdin, maxRequest))
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return "", fmt.Errorf("relation-set --file %s: %w", path, err)
	}
	return string(data), nil
}
