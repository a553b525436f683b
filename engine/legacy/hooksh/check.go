package hooksh

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/fixpoint/fixpoint/engine/legacy/shebang"
)

// maxScript bounds a hook or a file it sources that fixpoint-sh reads:
// charm shell libraries are kilobytes.
const maxScript = 4 << 20

// maxSourced bounds how many files one hook's check follows.
const maxSourced = 64

// unsupportedBuiltin are the POSIX (and bash) builtins the interpreter
// lacks or implements differently, with why: a hook calling one runs
// under the system shell.
var unsupportedBuiltin = map[string]string{
	"kill":    "kill is not implemented",
	"ulimit":  "ulimit is not implemented",
	"bg":      "job control is not implemented",
	"fg":      "job control is not implemented",
	"jobs":    "job control is not implemented",
	"disown":  "job control is not implemented",
	"suspend": "job control is not implemented",
	"newgrp":  "newgrp is not implemented",
	"fc":      "history is not implemented",
	"logout":  "logout is not implemented",
	"local":   "local is not POSIX and runs differently",
}

// setFlags are the `set` options the interpreter has, as sh spells them.
const setFlags = "aefnux"

// setNames are the `set -o` names it has.
var setNames = map[string]bool{"allexport": true, "errexit": true, "noexec": true, "noglob": true, "nounset": true, "xtrace": true}

// Load reads and parses the hook at path as POSIX sh and checks it and
// every file it sources (named by literals and env's variables) with
// Check. It returns the parsed hook and its shebang's options, or why the
// system shell must run it instead.
func Load(path string, env []string) (*syntax.File, string, string) {
	data, err := readScript(path)
	if err != nil {
		return nil, "", err.Error()
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	opts, ok := shebang.POSIX(string(first))
	if !ok {
		return nil, "", fmt.Sprintf("its first line %.60q is not a POSIX sh one fixpoint-sh runs", first)
	}
	var files []*syntax.File
	f, reason := checkFile(path, data, expand.ListEnviron(env...), map[string]bool{}, &files)
	if reason == "" {
		reason = checkUmask(files)
	}
	if reason != "" {
		return nil, opts, reason
	}
	return f, opts, ""
}

// readScript reads the script at path, up to maxScript bytes. It reads
// what the file holds rather than into a maxScript buffer: zeroing 4 MiB
// per file, and the garbage collection that much heap starts, was most of
// what Load cost a hook.
func readScript(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxScript+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxScript {
		return nil, fmt.Errorf("%s is larger than %d MiB", path, maxScript>>20)
	}
	return data, nil
}

// checkFile parses data as POSIX sh and checks it and what it sources,
// adding every file parsed to files.
func checkFile(path string, data []byte, env expand.Environ, seen map[string]bool, files *[]*syntax.File) (*syntax.File, string) {
	seen[path] = true
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(bytes.NewReader(data), path)
	if err != nil {
		return nil, "not POSIX sh to its parser: " + err.Error()
	}
	if reason := Check(f); reason != "" {
		return nil, reason
	}
	*files = append(*files, f)
	for _, src := range sourced(f) {
		name, ok := literal(src, env)
		switch {
		case !ok:
			return nil, fmt.Sprintf("%s sources a file named at run time", syntax.Pos.String(src.Pos()))
		case !strings.Contains(name, "/"):
			return nil, fmt.Sprintf("%s sources %s, which sh looks up in PATH", src.Pos(), name)
		case seen[name]:
			continue
		case len(seen) >= maxSourced:
			return nil, fmt.Sprintf("sources more than %d files", maxSourced)
		}
		data, err := readScript(name)
		if err != nil {
			// sh fails at that line too; the system shell says so.
			return nil, err.Error()
		}
		if _, reason := checkFile(name, data, env, seen, files); reason != "" {
			return nil, reason
		}
	}
	return f, ""
}

// Check says why the interpreter cannot run f as sh would, or "":
// commands in the background (`&`, whose job control and $! it lacks),
// builtins it lacks, trap on anything but EXIT, set options it lacks.
func Check(f *syntax.File) string {
	var reason string
	syntax.Walk(f, func(n syntax.Node) bool {
		if reason != "" {
			return false
		}
		switch n := n.(type) {
		case *syntax.Stmt:
			if n.Background || n.Coprocess || n.Disown {
				reason = fmt.Sprintf("%s runs a command in the background", n.Pos())
			}
		case *syntax.CallExpr:
			reason = checkCall(n)
		case *syntax.FuncDecl:
			// The parser takes `() cmd` (FuzzLoad found it), which sh
			// refuses: the system shell says so in its own words.
			if n.Name == nil {
				reason = fmt.Sprintf("%s declares a function without a name", n.Pos())
			}
		}
		return reason == ""
	})
	return reason
}

// checkCall checks one simple command whose name is a literal.
func checkCall(c *syntax.CallExpr) string {
	if len(c.Args) == 0 {
		return ""
	}
	name := c.Args[0].Lit()
	args := make([]string, 0, len(c.Args)-1)
	for _, w := range c.Args[1:] {
		args = append(args, w.Lit())
	}
	if why, bad := unsupportedBuiltin[name]; bad {
		return fmt.Sprintf("%s: %s", c.Pos(), why)
	}
	switch name {
	case "umask":
		return umaskArgs(c.Pos(), args)
	case "trap":
		if len(args) < 2 {
			return fmt.Sprintf("%s: trap prints or resets traps as the interpreter does not", c.Pos())
		}
		for _, sig := range args[1:] {
			if sig != "EXIT" {
				return fmt.Sprintf("%s: trap on %q: the interpreter traps only EXIT", c.Pos(), sig)
			}
		}
	case "set":
		return checkSet(c.Pos(), args)
	}
	return ""
}

// checkSet checks set's options up to the first operand; a word that is
// not a literal ("" from Lit) ends them, as operands come there.
func checkSet(pos syntax.Pos, args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "" || a == "--" || a == "-" || (a[0] != '-' && a[0] != '+') {
			return ""
		}
		if a[1:] == "o" {
			if i+1 >= len(args) || !setNames[args[i+1]] {
				return fmt.Sprintf("%s: set %s: the interpreter lacks that option", pos, strings.Join(args[i:min(i+2, len(args))], " "))
			}
			i++
			continue
		}
		if strings.Trim(a[1:], setFlags) != "" {
			return fmt.Sprintf("%s: set %s: the interpreter lacks that option", pos, a)
		}
	}
	return ""
}

// sourced are the words naming the files f sources with `.` or source.
func sourced(f *syntax.File) []*syntax.Word {
	var out []*syntax.Word
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) >= 2 {
			if name := c.Args[0].Lit(); name == "." || name == "source" {
				out = append(out, c.Args[1])
			}
		}
		return true
	})
	return out
}

// literal is the value of w made of literal text, quotes and plain
// $VAR/${VAR} from env, or false.
func literal(w *syntax.Word, env expand.Environ) (string, bool) {
	var b strings.Builder
	var parts func([]syntax.WordPart) bool
	parts = func(ps []syntax.WordPart) bool {
		for _, p := range ps {
			switch p := p.(type) {
			case *syntax.Lit:
				b.WriteString(p.Value)
			case *syntax.SglQuoted:
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				if !parts(p.Parts) {
					return false
				}
			case *syntax.ParamExp:
				if p.Short && p.Param.Value == "" || p.Excl || p.Length || p.Width || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Exp != nil || p.Names != 0 {
					return false
				}
				v := env.Get(p.Param.Value)
				if !v.IsSet() || !syntax.ValidName(p.Param.Value) {
					return false
				}
				b.WriteString(v.String())
			default:
				return false
			}
		}
		return true
	}
	if !parts(w.Parts) {
		return "", false
	}
	return b.String(), true
}
