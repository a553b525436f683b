package main

import (
	"github.com/spf13/pflag"

	"github.com/fixpoint/fixpoint/engine/legacy"
)

// hookShellFlag adds --hook-shell, what runs old charms' POSIX sh hooks,
// to the commands that start an agent (agent, up).
func hookShellFlag(f *pflag.FlagSet, p *string) {
	f.StringVar(p, "hook-shell", legacy.HookShellBuiltin,
		"what runs old charms' #!/bin/sh hooks: builtin (fixpoint-sh, hook tools as builtins, no process per call) or system (each hook its own executable, as Juju runs it)")
}
