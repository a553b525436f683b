package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
)

func newDebugExplainCmd() *cobra.Command {
	var r remote
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "explain UNIT",
		Short: "Say why UNIT is stale (what changed, key by key) or why it is in error",
		Example: `  fixpoint debug explain web/0
  fixpoint debug explain db/1 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := r.client()
			if err != nil {
				return err
			}
			e, err := c.Explain(cmd.Context(), args[0])
			if err != nil {
				return exitf(exitFailed, "explain %s: %v", args[0], err)
			}
			if asJSON {
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				return enc.Encode(e)
			}
			printExplanation(e)
			return nil
		},
	}
	r.flags(cmd)
	r.envFlag(cmd)
	r.revealFlag(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func printExplanation(e *engine.Explanation) {
	fmt.Printf("%s is %s", e.Unit, e.Phase)
	if e.Stale {
		fmt.Printf(": its universe changed (reconciled %s, now %s)", model.ShortHash(e.Reconciled), model.ShortHash(e.Current))
	} else {
		fmt.Printf(": it reconciled its current universe %s", model.ShortHash(e.Current))
	}
	fmt.Println()
	if e.Error != nil {
		fmt.Printf("error (%s, attempt %d): %s\n", e.Error.Kind, e.Error.Attempts, e.Error.Message)
	}
	if len(e.Changes) > 0 {
		fmt.Println("changed since the last reconcile:")
		for _, ch := range e.Changes {
			fmt.Println("  " + ch.String())
		}
	}
	if e.Stale && len(e.Events) > 0 {
		fmt.Println("events an old-hook charm would see:")
		for _, ev := range e.Events {
			fmt.Println("  " + ev.String())
		}
	}
	if e.Note != "" {
		fmt.Println("note: " + e.Note)
	}
}
