// Command fixpoint-sh runs old charms' POSIX sh hooks in an embedded
// interpreter whose Juju hook tools are builtins (engine/legacy/hooksh):
// the agent starts it, contained as any hook, as
// `fixpoint-sh --tools DIR -- HOOK`. A hook it cannot run faithfully it
// execs for the system shell before running any of it.
//
// Like fixpoint-hook it lives as long as one hook: the runtime need not
// size GOMAXPROCS from the cgroup or keep re-checking it.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
package main

import (
	"os"

	"github.com/fixpoint/fixpoint/engine/legacy/hooksh"
)

func main() {
	os.Exit(hooksh.Main(os.Args))
}
