package hooksh

import (
	"context"
	"fmt"
	"strconv"
	"syscall"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// The interpreter lacks umask, which charms use before writing secrets.
// fixpoint-sh provides it by setting its own process's umask: what the
// interpreter creates and every process it starts then inherit it, as in
// sh. Subshells are goroutines of the same process here, so a umask set
// in one would outlive it; checkUmask sends such hooks to the system
// shell.

// umask runs `umask` and `umask MODE` (octal) as sh does; it returns the
// command the interpreter runs instead: `:` when done, `false` when the
// mode is bad.
func umask(ctx context.Context, args []string) []string {
	hc := interp.HandlerCtx(ctx)
	switch len(args) {
	case 1:
		old := syscall.Umask(0)
		syscall.Umask(old)
		fmt.Fprintf(hc.Stdout, "%04o\n", old)
		return []string{":"}
	case 2:
		mode, err := strconv.ParseUint(args[1], 8, 32)
		if err != nil || mode > 0o777 {
			fmt.Fprintf(hc.Stderr, "umask: Illegal mode: %s\n", args[1])
			return []string{"false"}
		}
		syscall.Umask(int(mode))
		return []string{":"}
	}
	fmt.Fprintf(hc.Stderr, "umask: only `umask` and `umask OCTAL` are supported\n")
	return []string{"false"}
}

// umaskArgs checks a literal umask call's arguments: none, or one octal
// mode (symbolic modes and -S are sh's alone).
func umaskArgs(pos syntax.Pos, args []string) string {
	switch {
	case len(args) == 0:
		return ""
	case len(args) == 1 && args[0] != "":
		if m, err := strconv.ParseUint(args[0], 8, 32); err == nil && m <= 0o777 {
			return ""
		}
	}
	return fmt.Sprintf("%s: umask with a mode other than one octal number", pos)
}

// checkUmask refuses files (a hook and what it sources) that set the
// umask inside a subshell: in ( ), $( ), a pipeline or the background,
// directly or through a function that does.
func checkUmask(files []*syntax.File) string {
	funcs := map[string]*syntax.Stmt{}
	for _, f := range files {
		syntax.Walk(f, func(n syntax.Node) bool {
			// Check refused nameless ones.
			if d, ok := n.(*syntax.FuncDecl); ok && d.Name != nil {
				funcs[d.Name.Value] = d.Body
			}
			return true
		})
	}
	// fixpoint-sh's own umask and echo, and the printf echo becomes, are
	// run before functions are looked up.
	for _, name := range []string{"umask", "echo", "printf"} {
		if _, ok := funcs[name]; ok {
			return "defines a function named " + name + ", which fixpoint-sh's " + name + " would shadow"
		}
	}
	// Functions that set the umask, directly or by calling one that does.
	sets := map[string]bool{"umask": true}
	for changed := true; changed; {
		changed = false
		for name, body := range funcs {
			if sets[name] {
				continue
			}
			syntax.Walk(body, func(n syntax.Node) bool {
				if c, ok := n.(*syntax.CallExpr); ok && setsUmask(c, sets) {
					sets[name], changed = true, true
				}
				return !sets[name]
			})
		}
	}
	var reason string
	var walk func(root syntax.Node, sub bool)
	walk = func(root syntax.Node, sub bool) {
		syntax.Walk(root, func(n syntax.Node) bool {
			if reason != "" {
				return false
			}
			if n == root {
				return true
			}
			switch n := n.(type) {
			case *syntax.FuncDecl:
				// Its body runs where it is called: judged there.
				walk(n.Body, false)
				return false
			case *syntax.Subshell, *syntax.CmdSubst, *syntax.ProcSubst:
				walk(n, true)
				return false
			case *syntax.BinaryCmd:
				if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
					walk(n, true)
					return false
				}
			case *syntax.Stmt:
				if n.Background && !sub {
					walk(n, true)
					return false
				}
			case *syntax.CallExpr:
				if sub && setsUmask(n, sets) {
					reason = fmt.Sprintf("%s: sets the umask in a subshell, which the interpreter runs in its own process", n.Pos())
				}
			}
			return true
		})
	}
	for _, f := range files {
		walk(f, false)
	}
	return reason
}

// setsUmask says whether c is umask with a mode or a call of a function
// in sets.
func setsUmask(c *syntax.CallExpr, sets map[string]bool) bool {
	if len(c.Args) == 0 {
		return false
	}
	name := c.Args[0].Lit()
	if name == "umask" {
		return len(c.Args) > 1
	}
	return sets[name]
}
