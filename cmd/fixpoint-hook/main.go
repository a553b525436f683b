// Command fixpoint-hook is the program behind the Juju hook tools
// (relation-get, relation-set, config-get, ...) that old charms' hooks
// call: the agent links it under each tool's name on the hooks' PATH. It
// links only the standard library and the tools' protocol, so a call costs
// little more than spawning /bin/true (bench/oldhooks measures it).
package main

import (
	"os"

	"github.com/fixpoint/fixpoint/engine/legacy/hooktool"
)

func main() {
	os.Exit(hooktool.Command(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
