package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/schemas"
)

// warnUnitsFlag adds --warn-units to vet and plan.
func warnUnitsFlag(cmd *cobra.Command, v *int) {
	cmd.Flags().IntVar(v, "warn-units", model.DefaultWarnUnits, "warn about a service of more units than this (0: never)")
}

// warnLarge prints, on w, a warning at file:line:col for every service of
// env asking for more than over units.
func warnLarge(w io.Writer, env *schemas.Env, over int) {
	for _, p := range env.Env.LargeServices(over) {
		fmt.Fprintln(w, "warning: "+env.Problem(p).String())
	}
}
