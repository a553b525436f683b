package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// unitDetail is what `fixpoint show-unit` prints about one unit: the
// control plane's detail and its last runs.
type unitDetail struct {
	*engine.UnitDetail
	Runs []*unitRun `json:"last_runs"`
	// Events are the unit's last events, oldest first (events.go).
	Events []unitEvent `json:"events,omitempty"`
}

// unitRun is one recent hook run.
type unitRun struct {
	Time     time.Time `json:"time"`
	Outcome  string    `json:"outcome"`
	Duration string    `json:"duration"`
	Hash     string    `json:"universe"`
	Error    string    `json:"error,omitempty"`
}

func newShowUnitCmd() *cobra.Command {
	var r remote
	var format string
	var runs, events int
	cmd := &cobra.Command{
		Use:   "show-unit UNIT",
		Short: "Show one unit: machine, leader, phase, its relations and settings, last runs",
		Long: `show-unit prints everything about one unit: its machine and address, whether
it leads its service, its phase and since when, its workload status, each
relation it is in with the units it sees there and the settings it wrote,
its state, its last hook runs, and, last, its recent events (as 'fixpoint events'
lists them). YAML by default, --format json for
scripts.

Secret values (config options of type secret; relation, application and
leader keys named like password, secret, token, key or credential) are shown
as <redacted sha256:…>, a prefix of their hash; --reveal shows them, to the
operator credential only.`,
		Example: `  fixpoint show-unit web/0
  fixpoint show-unit db/0 -o json | jq '.relations[].settings'`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeUnits,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format == "table" {
				format = "yaml"
			}
			if err := checkFormat(format); err != nil {
				return err
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			d, err := showUnit(cmd.Context(), c, args[0], runs)
			if err != nil {
				return err
			}
			d.Events = recentEvents(cmd.Context(), c, args[0], events)
			if format == "json" {
				return writeJSONStatus(cmd.OutOrStdout(), d, false)
			}
			return writeUnitYAML(cmd.OutOrStdout(), d)
		},
	}
	r.flags(cmd)
	r.envFlag(cmd)
	r.revealFlag(cmd)
	cmd.Flags().StringVarP(&format, "format", "o", "yaml", "output format: yaml or json")
	cmd.Flags().IntVar(&runs, "runs", 5, "how many of the last hook runs to show")
	cmd.Flags().IntVar(&events, "events", 10, "how many of the last events to show, at the end")
	return cmd
}

func showUnit(ctx context.Context, c *api.Client, name string, runs int) (*unitDetail, error) {
	ud, err := c.Unit(ctx, name)
	if api.IsUnknownRoute(err) {
		ud, err = unitFromState(ctx, c, name)
	}
	if errors.Is(err, api.ErrNotFound) {
		return nil, exitf(exitFailed, "%v", err)
	}
	if err != nil {
		return nil, exitf(exitFailed, "show-unit %s: %v", name, err)
	}
	d := &unitDetail{UnitDetail: ud, Runs: []*unitRun{}}
	if runs > 0 {
		logs, err := c.Logs(ctx, name, 0, runs, 0)
		if err != nil {
			return nil, exitf(exitFailed, "runs of %s: %v", name, err)
		}
		for _, run := range logs.Runs {
			d.Runs = append(d.Runs, &unitRun{Time: run.Time, Outcome: run.Outcome, Duration: run.Duration.Round(time.Millisecond).String(), Hash: model.ShortHash(run.Hash), Error: run.Error})
		}
	}
	return d, nil
}

// unitFromState is unit name's detail from the whole state and status, for
// a control plane without GET /v1/units: what it would answer
// (engine.NewUnitDetail), worked out on this side.
func unitFromState(ctx context.Context, c *api.Client, name string) (*engine.UnitDetail, error) {
	st, err := c.State(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("read the environment: %w", err)
	}
	if st.Units[name] == nil {
		return nil, engine.NoUnitError(st, name)
	}
	status, err := c.Status(ctx, false, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	return engine.NewUnitDetail(st, name, status.Units[name]), nil
}

// phaseAge is how long a unit has been in its phase, for tables:
// "2m10s".
func phaseAge(u *engine.UnitStatus, now time.Time) string {
	if u.Since.IsZero() {
		return "-"
	}
	d := now.Sub(u.Since)
	if d < 0 {
		d = 0
	}
	return d.Round(time.Second).String()
}
