package main

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/hookrun"
)

// Every command that runs hooks bounds them by the one default the agent,
// the Juju adapter and the simulator use.
func TestHookTimeoutDefaultIsOne(t *testing.T) {
	for name, cmd := range map[string]*cobra.Command{"up": newUpCmd(), "agent": newAgentCmd(), "charm test": newCharmTestCmd()} {
		f := cmd.Flags().Lookup("hook-timeout")
		if f == nil {
			t.Errorf("%s has no --hook-timeout", name)
			continue
		}
		if f.DefValue != hookrun.DefaultTimeout.String() {
			t.Errorf("%s --hook-timeout defaults to %s, want %s", name, f.DefValue, hookrun.DefaultTimeout)
		}
	}
}
