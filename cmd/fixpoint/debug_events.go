package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/events"
)

// newDebugEventsCmd is `fixpoint debug events`: the legacy events between
// two universes, one per line, as an old charm's hooks would run them.
func newDebugEventsCmd() *cobra.Command {
	var before, after string
	cmd := &cobra.Command{
		Use:   "events --before A.json --after B.json",
		Short: "Print the legacy hook events that lead from one universe to another",
		Long: `Print, one per line and in Juju's order, the hook events an old charm would
run to go from the universe in --before (the one last reconciled) to the one in
--after. Without --before the unit has never reconciled: the list starts with
install. The files are universes as 'fixpoint debug universe' prints them.`,
		Example: `  fixpoint debug universe web/0 > a.json
  # ... change something, then
  fixpoint debug universe web/0 > b.json
  fixpoint debug events --before a.json --after b.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var prev *events.Snapshot
			if before != "" {
				u, err := events.ReadUniverse(before)
				if err != nil {
					return fmt.Errorf("--before: %w", err)
				}
				if prev, err = events.FromUniverse(u); err != nil {
					return fmt.Errorf("--before %s: %w", before, err)
				}
			}
			u, err := events.ReadUniverse(after)
			if err != nil {
				return fmt.Errorf("--after: %w", err)
			}
			cur, err := events.FromUniverse(u)
			if err != nil {
				return fmt.Errorf("--after %s: %w", after, err)
			}
			if prev != nil && prev.Unit != cur.Unit {
				return fmt.Errorf("--before is a universe of %s but --after one of %s; compare two universes of the same unit", prev.Unit, cur.Unit)
			}
			out := cmd.OutOrStdout()
			for _, e := range events.Derive(prev, cur) {
				if _, err := fmt.Fprintln(out, e.String()); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&before, "before", "", "universe JSON the unit last reconciled (default: never reconciled)")
	cmd.Flags().StringVar(&after, "after", "", "universe JSON the unit sees now")
	_ = cmd.MarkFlagRequired("after")
	return cmd
}
