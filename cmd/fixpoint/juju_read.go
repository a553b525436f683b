package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/cmd/fixpoint/internal/juju"
	"github.com/fixpoint/fixpoint/model"
)

// The juju front's reads: status, show-unit, config, models, show-model,
// version and whoami.

func (f *jujuFront) statusCmd() *cobra.Command {
	var format string
	var utc bool
	cmd := &cobra.Command{
		Use:   "status [--format tabular|json|yaml]",
		Short: "Show the model's machines, applications and units, as juju status does",
		Long: `status prints the environment as juju status does: the model, its machines
(keyed by their Juju ids), its applications with their units (workload and
agent status, leader, machine, address, open ports) and relations. An
application whose leader set no status shows its units' most severe one,
as Juju derives it. Filters (juju status APP) are not taken.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkJujuFormat("status", format, "tabular", "json", "yaml"); err != nil {
				return err
			}
			src, err := f.source(cmd, timeZone(utc))
			if err != nil {
				return err
			}
			out := juju.FullStatus(src)
			if format == "tabular" {
				return writeJujuStatusTable(cmd.OutOrStdout(), out)
			}
			return writeJuju(cmd.OutOrStdout(), out, format)
		},
	}
	jujuFormat(cmd, &format, "tabular", "tabular", "json", "yaml")
	cmd.Flags().BoolVar(&utc, "utc", false, "print times in UTC")
	return cmd
}

// source reads the state and status of the environment --model names.
func (f *jujuFront) source(cmd *cobra.Command, loc *time.Location) (*juju.Source, error) {
	ctx := cmd.Context()
	c, st, err := f.clientAndModel(ctx, "", false)
	if err != nil {
		return nil, err
	}
	fs, err := c.Status(ctx, false, 0, 0)
	if err != nil {
		return nil, exitf(exitFailed, "status: %v", err)
	}
	return &juju.Source{State: st, Status: fs, Controller: f.controller(), Now: time.Now(), Loc: loc}, nil
}

// writeJujuStatusTable prints status as juju status's tabular format: the
// model, the applications and the units.
func writeJujuStatusTable(w io.Writer, s *juju.Status) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "Model\tController\tCloud/Region\tVersion")
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n\n", s.Model.Name, s.Model.Controller, s.Model.Cloud, s.Model.Version)
	fmt.Fprintln(tw, "App\tVersion\tStatus\tScale\tCharm\tRev\tMessage")
	apps := sortedKeys(s.Applications)
	for _, name := range apps {
		a := s.Applications[name]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d\t%s\n", name, a.Version, a.Status.Current, len(a.Units), a.CharmName, a.CharmRev, oneLine(a.Status.Message))
	}
	fmt.Fprintln(tw, "\nUnit\tWorkload\tAgent\tMachine\tPublic address\tPorts\tMessage")
	for _, name := range apps {
		for _, un := range sortedKeys(s.Applications[name].Units) {
			u := s.Applications[name].Units[un]
			writeUnitRow(tw, un, u, "")
			for _, sn := range sortedKeys(u.Subordinates) {
				writeUnitRow(tw, sn, u.Subordinates[sn], "  ")
			}
		}
	}
	fmt.Fprintln(tw, "\nMachine\tState\tAddress\tInst id\tMessage")
	for _, id := range sortedKeys(s.Machines) {
		m := s.Machines[id]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", id, m.JujuStatus.Current, m.DNSName, m.InstanceID, m.JujuStatus.Message)
	}
	return tw.Flush()
}

func writeUnitRow(w io.Writer, name string, u juju.Unit, indent string) {
	if u.Leader {
		name += "*"
	}
	fmt.Fprintf(w, "%s%s\t%s\t%s\t%s\t%s\t%s\t%s\n", indent, name, u.WorkloadStatus.Current, u.JujuStatus.Current, u.Machine, u.PublicAddress, strings.Join(u.OpenPorts, ","), oneLine(u.WorkloadStatus.Message))
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (f *jujuFront) showUnitCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "show-unit UNIT [--format json|yaml]",
		Short: "Show a unit: machine, leader, ports and its relations' data, as juju show-unit does",
		Long: `show-unit prints UNIT as juju show-unit does: its machine, address, open
ports, charm, leadership, and for each relation the unit's own settings,
the related application's data and each related unit's settings. Values
are shown as they are (Juju hides none), so it reads them with the
operator credential's --reveal.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkJujuFormat("show-unit", format, "yaml", "json"); err != nil {
				return err
			}
			_, st, err := f.clientAndModel(cmd.Context(), f.model, true)
			if err != nil {
				return err
			}
			version := ""
			if u := st.Units[args[0]]; u != nil {
				if svc := st.Services[u.Service]; svc != nil && st.Units[svc.Leader] != nil {
					version = st.Units[svc.Leader].State[model.StateAppVersion]
				}
			}
			info, ok := juju.ShowUnit(st, args[0], version)
			if !ok {
				return exitf(exitFailed, "unit %q not found (not found)", args[0])
			}
			return writeJuju(cmd.OutOrStdout(), map[string]juju.UnitInfo{args[0]: info}, format)
		},
	}
	jujuFormat(cmd, &format, "yaml", "yaml", "json")
	return cmd
}

func (f *jujuFront) configCmd() *cobra.Command {
	var format string
	var reset []string
	cmd := &cobra.Command{
		Use:   "config APP [KEY=VALUE...] [--reset KEY,...] [--format json|yaml]",
		Short: "Show or set an application's config, as juju config does",
		Long: `config APP prints the application's charm settings (type, value, default,
description and source: user, default or unset) and its application
config (trust), in juju config's layout. Values are shown as they are,
read with the operator credential's --reveal. With KEY=VALUE pairs or
--reset it sets them, as fixpoint config SERVICE KEY=VALUE does: an edit
of the environment, applied.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 || len(reset) > 0 {
				return f.setConfigVia(cmd, args[0], args[1:], reset)
			}
			if err := checkJujuFormat("config", format, "yaml", "json"); err != nil {
				return err
			}
			c, st, err := f.clientAndModel(cmd.Context(), f.model, true)
			if err != nil {
				return err
			}
			svc := st.Services[args[0]]
			if svc == nil {
				return exitf(exitFailed, "application %q not found (not found)", args[0])
			}
			sc, err := serviceConfig(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			charm := svc.Name
			if ch := st.Charms[svc.Charm]; ch != nil {
				charm = ch.Meta.Name
			}
			return writeJuju(cmd.OutOrStdout(), juju.ServiceConfig(sc, charm, svc.Trust), format)
		},
	}
	jujuFormat(cmd, &format, "yaml", "yaml", "json")
	cmd.Flags().StringSliceVar(&reset, "reset", nil, "put these keys back to the charm's defaults (comma-separated)")
	return cmd
}

func (f *jujuFront) versionCmd() *cobra.Command {
	var format string
	var all bool
	cmd := &cobra.Command{
		Use:   "version [--all] [--format smart|json|yaml]",
		Short: "Print the Juju version fixpoint follows (" + juju.Version + ")",
		Long: `version prints the Juju release whose command line and hook environment
fixpoint follows, as juju version does; --all adds the fixpoint build's
commit and Go version. fixpoint version prints fixpoint's own.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkJujuFormat("version", format, "smart", "json", "yaml"); err != nil {
				return err
			}
			_, commit, modified, _ := buildInfo()
			v := juju.Versions(commit, modified)
			switch {
			case format != "smart" && all:
				return writeJuju(cmd.OutOrStdout(), v, format)
			case format != "smart":
				return writeJuju(cmd.OutOrStdout(), v.Version, format)
			case all:
				return writeJuju(cmd.OutOrStdout(), v, "yaml")
			}
			fmt.Fprintln(cmd.OutOrStdout(), v.Version)
			return nil
		},
	}
	jujuFormat(cmd, &format, "smart", "smart", "json", "yaml")
	cmd.Flags().BoolVar(&all, "all", false, "print the build's commit and Go version too")
	return cmd
}

func (f *jujuFront) whoamiCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "whoami [--format tabular|json|yaml]",
		Short: "Print the controller, model and user in use",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkJujuFormat("whoami", format, "tabular", "json", "yaml"); err != nil {
				return err
			}
			_, env, err := f.modelClient(cmd.Context(), "")
			if err != nil {
				return err
			}
			who := struct {
				Controller string `json:"controller" yaml:"controller"`
				Model      string `json:"model,omitempty" yaml:"model,omitempty"`
				User       string `json:"user" yaml:"user"`
			}{f.controller(), env.Name, juju.Owner}
			if format != "tabular" {
				return writeJuju(cmd.OutOrStdout(), who, format)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Controller:  %s\nModel:       %s\nUser:        %s\n", who.Controller, who.Model, who.User)
			return nil
		},
	}
	jujuFormat(cmd, &format, "tabular", "tabular", "json", "yaml")
	return cmd
}
