// Package hooksh is fixpoint-sh: it runs an old charm's POSIX sh hook in
// an embedded interpreter (mvdan.cc/sh) whose Juju hook tools are
// builtins speaking the tool socket's protocol in-process (hooktool.Call),
// so that `x=$(relation-get ...)` costs neither a fork nor an exec. Every
// other command is exec'd as a real process, as sh would.
//
// The agent starts fixpoint-sh exactly where and how it starts a hook
// process (hookrun containment, environment, directory, output, timeout),
// so charm code never runs inside the agent. A hook the interpreter cannot
// run faithfully (see Check) is handed to the system shell before any of
// it runs: fixpoint-sh execs the hook itself, in the same process.
package hooksh

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/fixpoint/fixpoint/engine/legacy/hooktool"
	"github.com/fixpoint/fixpoint/engine/legacy/shebang"
)

// ProgramName is the interpreter's program, as `go install ./cmd/...`
// installs it and as the agent builds it.
const ProgramName = shebang.ProgramName

// ExitUsage is the status of a fixpoint-sh started wrongly, as sh's for a
// usage error.
const ExitUsage = 2

// Usage is how the agent starts a hook: fixpoint-sh --tools DIR -- HOOK,
// DIR being where the hook tools' links are (a command found there is a
// builtin) and HOOK the hook's executable, $0 of the script.
const Usage = ProgramName + " --tools DIR -- HOOK [ARG...]"

// Main is fixpoint-sh: it answers --protocol like fixpoint-hook (the
// agent's check that the program speaks this protocol), runs the hook
// when it can and execs it for the system shell when it cannot. It
// returns the hook's exit status; a successful exec never returns.
func Main(argv []string) int {
	if len(argv) == 2 && argv[1] == "--protocol" {
		fmt.Printf("%d\n", hooktool.ProtocolVersion)
		return 0
	}
	if len(argv) < 5 || argv[1] != "--tools" || argv[3] != "--" || argv[2] == "" || argv[4] == "" {
		fmt.Fprintf(os.Stderr, "ERROR usage: %s\n", Usage)
		return ExitUsage
	}
	tools, hook, args := argv[2], argv[4], argv[5:]
	env := os.Environ()
	file, opts, reason := Load(hook, env)
	if reason != "" {
		// Nothing of the hook has run: the system shell runs it whole.
		err := syscall.Exec(hook, append([]string{hook}, args...), env)
		fmt.Fprintf(os.Stderr, "ERROR %s: %s needs the system shell (%s), and exec failed: %v\n", ProgramName, hook, reason, err)
		return 126
	}
	return Run(context.Background(), file, opts, tools, args, env, os.Stdin, os.Stdout, os.Stderr)
}

// Run interprets file (from Load) with opts (its shebang's option word,
// or "") set and args as $1..., in the process's working directory, with
// env; hook tools found in the tools directory are builtins. It returns
// the exit status as sh would.
func Run(ctx context.Context, file *syntax.File, opts, tools string, args, env []string, stdin io.Reader, stdout, stderr io.Writer) int {
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", ProgramName, err)
		return 126
	}
	r, err := interp.New(
		interp.Env(expand.ListEnviron(env...)),
		interp.Dir(dir),
		interp.StdIO(stdin, stdout, stderr),
		interp.Params(params(opts, args)...),
		interp.CallHandler(callBuiltins(dashEcho())),
		interp.ExecHandlers(toolBuiltins(filepath.Clean(tools))),
	)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", ProgramName, err)
		return 126
	}
	err = r.Run(ctx, file)
	if err == nil {
		return 0
	}
	if code, ok := interp.IsExitStatus(err); ok {
		return int(code)
	}
	fmt.Fprintf(stderr, "%s: %v\n", file.Name, err)
	return 2
}

// toolBuiltins runs a command found in the tools directory in-process:
// it is a Juju hook tool, which the process would have been too.
// Resolving through PATH as exec would keeps a charm's own relation-get
// earlier on PATH (or an absolute path) what it was.
func toolBuiltins(tools string) func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return func(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
		return func(ctx context.Context, args []string) error {
			hc := interp.HandlerCtx(ctx)
			path, err := interp.LookPathDir(hc.Dir, hc.Env, args[0])
			if err != nil || filepath.Dir(path) != tools {
				// A process of its own, which may call the tools
				// (`sh -c 'relation-set ...'`) behind the builtins'
				// kept answers.
				return hooktool.Outside(func() error { return next(ctx, args) })
			}
			getenv := func(name string) (string, bool) {
				v := hc.Env.Get(name)
				// A process sees only what is exported.
				if !v.Exported || !v.IsSet() {
					return "", false
				}
				return v.String(), true
			}
			code := hooktool.Call(filepath.Base(path), args[1:], getenv, hc.Dir, hc.Stdin, hc.Stdout, hc.Stderr)
			if code != 0 {
				return interp.ExitStatus(uint8(code))
			}
			return nil
		}
	}
}

// callBuiltins runs umask, which the interpreter lacks, and echo as dash
// does when /bin/sh is dash; it stops a builtin the interpreter lacks
// that Check could not see because its name was computed (`$cmd`): the
// hook fails with a message saying what to do, where sh would have run it.
func callBuiltins(dash bool) interp.CallHandlerFunc {
	return func(ctx context.Context, args []string) ([]string, error) {
		switch args[0] {
		case "umask":
			return umask(ctx, args), nil
		case "echo":
			if dash {
				return echoAsDash(args), nil
			}
			return args, nil
		}
		if why, bad := unsupportedBuiltin[args[0]]; bad {
			hc := interp.HandlerCtx(ctx)
			fmt.Fprintf(hc.Stderr, "%s: %s: %s; run this charm with --hook-shell system\n", ProgramName, args[0], why)
			return nil, errors.New(args[0] + " is not supported by " + ProgramName)
		}
		return args, nil
	}
}

// params are `set` arguments for the shebang's options and the hook's
// positional parameters.
func params(opts string, args []string) []string {
	p := make([]string, 0, len(args)+2)
	if opts != "" {
		p = append(p, opts)
	}
	return append(append(p, "--"), args...)
}
