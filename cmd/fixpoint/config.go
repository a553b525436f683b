package main

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/model"
)

// configValue is one option of a service as `fixpoint config` shows it.
type configValue struct {
	Type        string `json:"type"`
	Value       any    `json:"value"`
	Default     any    `json:"default,omitempty"`
	Source      string `json:"source"` // "set", "default" or "unset"
	Description string `json:"description,omitempty"`
}

// serviceConfig is a service's effective config.
type serviceConfig struct {
	Service string                  `json:"service"`
	Charm   string                  `json:"charm"`
	Config  map[string]*configValue `json:"config"`
}

func newConfigCmd() *cobra.Command {
	var r remote
	var format string
	cmd := &cobra.Command{
		Use:   "config SERVICE",
		Short: "Show a service's effective config, with defaults marked",
		Long: `config shows every option of SERVICE's charm: its type, the value the unit
hooks get, and where it comes from: "set" (the environment sets it),
"default" (the charm's default applies) or "unset" (no value, no default).
Config is changed by editing the environment and applying it; there is no
set command.`,
		Example: `  fixpoint config db
  fixpoint config web -o json | jq '.config.port.value'`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeUnitsAndServices,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			st, err := c.State(cmd.Context(), false)
			if err != nil {
				return exitf(exitFailed, "read the environment: %v", err)
			}
			sc, err := effectiveConfig(st, args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch format {
			case "json":
				return writeJSONStatus(out, sc, false)
			case "yaml":
				return writeYAML(out, sc)
			}
			printConfig(out, sc)
			return nil
		},
	}
	r.flags(cmd)
	formatFlag(cmd, &format)
	return cmd
}

// effectiveConfig is the config of service svc with the source of each
// value; an option holding exactly its default counts as a default.
func effectiveConfig(st *model.State, svc string) (*serviceConfig, error) {
	s := st.Services[svc]
	if s == nil {
		if u := st.Units[svc]; u != nil {
			return nil, exitf(exitFailed, "%s is a unit; config belongs to its service: fixpoint config %s", svc, u.Service)
		}
		return nil, exitf(exitFailed, "no service %q in the environment (services: %s)", svc, strings.Join(sortedKeys(st.Services), ", "))
	}
	sc := &serviceConfig{Service: svc, Charm: s.Charm, Config: map[string]*configValue{}}
	var opts map[string]model.Option
	if ch := st.Charms[s.Charm]; ch != nil {
		opts = ch.Meta.Options
		sc.Charm = ch.Meta.Name + " " + short(s.Charm)
	}
	for k, o := range opts {
		cv := &configValue{Type: o.Type, Description: o.Description, Source: "unset"}
		var def any
		if o.Default != nil {
			if v, err := model.ConvertOption(o.Type, o.Default); err == nil {
				def, cv.Default = v, v
			}
		}
		if v, ok := s.Config[k]; ok {
			cv.Value, cv.Source = v, "set"
			if def != nil && sameValue(v, def) {
				cv.Source = "default"
			}
		}
		sc.Config[k] = cv
	}
	for k, v := range s.Config {
		if _, ok := sc.Config[k]; !ok {
			sc.Config[k] = &configValue{Type: "?", Value: v, Source: "set"}
		}
	}
	return sc, nil
}

// sameValue compares config values as their JSON forms would: numbers
// decoded from the state are float64 where a default may be int.
func sameValue(a, b any) bool {
	return reflect.DeepEqual(a, b) || fmt.Sprint(a) == fmt.Sprint(b)
}

func printConfig(w io.Writer, sc *serviceConfig) {
	fmt.Fprintf(w, "Service %s (charm %s)\n\n", sc.Service, sc.Charm)
	if len(sc.Config) == 0 {
		fmt.Fprintln(w, "its charm has no options")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "OPTION\tTYPE\tVALUE\tSOURCE\tDESCRIPTION")
	for _, k := range sortedKeys(sc.Config) {
		cv := sc.Config[k]
		val := "-"
		if cv.Value != nil {
			val = oneLine(fmt.Sprint(cv.Value))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k, cv.Type, val, cv.Source, oneLine(cv.Description))
	}
	tw.Flush()
}
