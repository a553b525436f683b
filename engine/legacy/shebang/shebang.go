// Package shebang says which hooks fixpoint-sh runs: the rule both the
// agent (choosing the program to start) and fixpoint-sh (setting the
// shebang's options) apply. It links only the standard library, so the
// agent does not link the interpreter.
package shebang

import "strings"

// ProgramName is the interpreter's program, as `go install ./cmd/...`
// installs it and as the agent builds it.
const ProgramName = "fixpoint-sh"

// shebangs are the interpreters of the hooks fixpoint-sh runs: POSIX sh.
// Bash scripts keep bash: the interpreter's bash is partial, and a hook
// written for bash is not one to second-guess.
var shebangs = []string{"/bin/sh", "/usr/bin/sh", "/usr/bin/env sh"}

// POSIX says whether a hook's first line names POSIX sh, with at
// most one option word of the flags fixpoint-sh sets as sh would (e, u,
// x, f: `#!/bin/sh -e` is common), and returns that word ("" for none).
func POSIX(firstLine string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimRight(firstLine, " \t\r"), "#!")
	if !ok {
		return "", false
	}
	rest = strings.TrimLeft(rest, " \t")
	for _, s := range shebangs {
		after, ok := strings.CutPrefix(rest, s)
		if !ok {
			continue
		}
		if after == "" {
			return "", true
		}
		opt, ok := strings.CutPrefix(after, " ")
		opt = strings.TrimLeft(opt, " \t")
		// Linux passes "sh -e" to env as one word, which env fails to find.
		if !ok || strings.HasPrefix(s, "/usr/bin/env") || len(opt) < 2 || opt[0] != '-' || strings.Trim(opt[1:], "eufx") != "" {
			return "", false
		}
		return opt, true
	}
	return "", false
}
