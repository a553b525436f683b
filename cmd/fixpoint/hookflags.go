package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/fixpoint/fixpoint/engine/hookrun"
	"github.com/fixpoint/fixpoint/engine/legacy"
)

// hookShellFlag adds --hook-shell, what runs old charms' POSIX sh hooks,
// to the commands that start an agent (agent, up).
func hookShellFlag(f *pflag.FlagSet, p *string) {
	f.StringVar(p, "hook-shell", legacy.HookShellBuiltin,
		"what runs old charms' #!/bin/sh hooks: builtin (fixpoint-sh, hook tools as builtins, no process per call) or system (each hook its own executable, as Juju runs it)")
}

// hookTimeoutFlag adds --hook-timeout, how long one hook run may take, to
// the commands that run hooks (agent, up, charm test).
func hookTimeoutFlag(f *pflag.FlagSet, p *time.Duration) {
	f.DurationVar(p, "hook-timeout", hookrun.DefaultTimeout, "how long one hook run may take before it is killed")
}
