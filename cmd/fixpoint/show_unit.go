package main

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// unitDetail is what `fixpoint show-unit` prints about one unit.
type unitDetail struct {
	Unit      string            `json:"unit"`
	Service   string            `json:"service"`
	Machine   string            `json:"machine,omitempty"`
	Address   string            `json:"address,omitempty"`
	Leader    bool              `json:"leader"`
	Phase     string            `json:"phase"`
	Since     time.Time         `json:"since"`
	Status    model.Status      `json:"status"`
	Error     string            `json:"error,omitempty"`
	Ports     []string          `json:"ports,omitempty"`
	Relations []*unitRelation   `json:"relations"`
	State     map[string]string `json:"state"`
	Runs      []*unitRun        `json:"last_runs"`
}

// unitRelation is one relation as the unit takes part in it: the
// settings it wrote there and the units it sees.
type unitRelation struct {
	ID        int               `json:"id"`
	Endpoint  string            `json:"endpoint"`
	Remote    string            `json:"remote"`
	Interface string            `json:"interface"`
	Members   []string          `json:"remote_units"`
	Settings  map[string]string `json:"settings"`
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
	var runs int
	cmd := &cobra.Command{
		Use:   "show-unit UNIT",
		Short: "Show one unit: machine, leader, phase, its relations and settings, last runs",
		Long: `show-unit prints everything about one unit: its machine and address, whether
it leads its service, its phase and since when, its workload status, each
relation it is in with the units it sees there and the settings it wrote,
its state, and its last hook runs. YAML by default, --format json for
scripts.`,
		Example: `  fixpoint show-unit web/0
  fixpoint show-unit db/0 -o json | jq '.relations[].settings'`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeUnitsAndServices,
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
			if format == "json" {
				return writeJSONStatus(cmd.OutOrStdout(), d, false)
			}
			return writeYAML(cmd.OutOrStdout(), d)
		},
	}
	r.flags(cmd)
	cmd.Flags().StringVarP(&format, "format", "o", "yaml", "output format: yaml or json")
	cmd.Flags().IntVar(&runs, "runs", 5, "how many of the last hook runs to show")
	return cmd
}

func showUnit(ctx context.Context, c *api.Client, name string, runs int) (*unitDetail, error) {
	st, err := c.State(ctx, false)
	if err != nil {
		return nil, exitf(exitFailed, "read the environment: %v", err)
	}
	u := st.Units[name]
	if u == nil {
		if _, ok := st.Services[name]; ok {
			return nil, exitf(exitFailed, "%s is a service; its units are %s", name, strings.Join(unitNames(st, name), ", "))
		}
		return nil, exitf(exitFailed, "no unit %q in the environment (units look like web/0)", name)
	}
	status, err := c.Status(ctx, false, 0, 0)
	if err != nil {
		return nil, exitf(exitFailed, "status: %v", err)
	}
	d := &unitDetail{Unit: name, Service: u.Service, Machine: u.Machine, Address: st.Address(u), Status: u.Status, Ports: u.Ports, State: u.State, Relations: []*unitRelation{}, Runs: []*unitRun{}}
	if d.State == nil {
		d.State = map[string]string{}
	}
	if us := status.Units[name]; us != nil {
		d.Leader, d.Phase, d.Since, d.Error, d.Status = us.Leader, us.Phase, us.Since, us.Error, us.Status
	}
	for _, r := range st.RelationsOf(u.Service) {
		ep, _ := r.Endpoint(u.Service)
		remote, _ := r.Remote(u.Service)
		ur := &unitRelation{ID: r.ID, Endpoint: ep.Name, Remote: remote.String(), Interface: r.Interface, Members: []string{}, Settings: map[string]string{}}
		for _, m := range st.RemoteMembers(u, r) {
			ur.Members = append(ur.Members, m.Name)
		}
		if b := u.Settings[r.ID]; b != nil && b.Data != nil {
			ur.Settings = b.Data
		}
		d.Relations = append(d.Relations, ur)
	}
	if runs > 0 {
		logs, err := c.Logs(ctx, name, 0, runs, 0)
		if err != nil {
			return nil, exitf(exitFailed, "runs of %s: %v", name, err)
		}
		for _, run := range logs.Runs {
			d.Runs = append(d.Runs, &unitRun{Time: run.Time, Outcome: run.Outcome, Duration: run.Duration.Round(time.Millisecond).String(), Hash: short(run.Hash), Error: run.Error})
		}
	}
	return d, nil
}

// unitNames lists a service's units in order, for messages.
func unitNames(st *model.State, svc string) []string {
	var out []string
	for _, u := range st.UnitsOf(svc) {
		out = append(out, u.Name)
	}
	if len(out) == 0 {
		return []string{"(none yet)"}
	}
	return out
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
