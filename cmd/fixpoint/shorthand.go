package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// Shorthands mean one flag across every command: -f is --file (the
// environment), -o is --format. A flag that once had one of them and
// means something else keeps only its long name; flagError says so when
// the old shorthand is typed.
var shorthands = map[string]string{"f": "file", "o": "format"}

// countFlags are the long names -n may have: a count, as tail -n counts
// lines (--tail of the commands that read records) and juju add-unit -n
// units (--num-units of deploy and add-unit).
var countFlags = map[string]bool{"tail": true, "num-units": true}

// retired are the long flags that held a shorthand of shorthands before
// it meant one flag: logs --follow had -f, charm pack --output had -o.
var retired = map[string]string{"f": "follow", "o": "output"}

// flagError words an unknown shorthand that fixpoint reserves for another
// flag: "logs -f" names --follow, "charm pack -o" --output.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	for short, long := range shorthands {
		if !strings.HasPrefix(msg, "unknown shorthand flag: '"+short+"'") {
			continue
		}
		hint := "-" + short + " is --" + long + " in fixpoint, and " + cmd.CommandPath() + " has no --" + long
		if alt := retired[short]; cmd.Flags().Lookup(alt) != nil {
			hint += "; did you mean --" + alt + "?"
		}
		return exitf(exitFailed, "%s: %s", msg, hint)
	}
	return err
}
