// Command fixpoint-hook is the program behind the Juju hook tools
// (relation-get, relation-set, config-get, ...) that old charms' hooks
// call: the agent links it under each tool's name on the hooks' PATH. It
// links only the standard library and the tools' protocol, so a call costs
// little more than spawning /bin/true (bench/oldhooks measures it).
//
// A call lives a few milliseconds: the runtime need not size GOMAXPROCS
// from the cgroup (reading /proc/self/mountinfo) or keep re-checking it.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
package main

import "github.com/fixpoint/fixpoint/engine/legacy/hooktool"

func main() {
	hooktool.Exec()
}
