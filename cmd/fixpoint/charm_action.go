package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fixpoint/fixpoint/engine/sim"
	"github.com/fixpoint/fixpoint/model"
)

// charmActions reads `charm test --action 'UNIT ACTION [KEY=VALUE ...]'`
// flags; KEY=VALUE is read as `fixpoint run` reads it.
func charmActions(flags []string) ([]sim.Action, error) {
	var out []sim.Action
	for _, s := range flags {
		f := strings.Fields(s)
		if len(f) < 2 {
			return nil, fmt.Errorf("--action %q: want 'UNIT ACTION [KEY=VALUE ...]', e.g. 'web/0 backup target=/tmp/x'", s)
		}
		a := sim.Action{Unit: f[0], Name: f[1]}
		if svc, ok := strings.CutSuffix(a.Unit, "/leader"); ok {
			if err := model.CheckName(model.KindService, svc); err != nil {
				return nil, fmt.Errorf("--action %q: %w", s, err)
			}
		} else if err := model.CheckUnitName(a.Unit); err != nil {
			return nil, fmt.Errorf("--action %q: %w", s, err)
		}
		if err := model.CheckActionName(a.Name); err != nil {
			return nil, fmt.Errorf("--action %q: %w", s, err)
		}
		params, err := actionParams("", f[2:], false)
		if err != nil {
			return nil, fmt.Errorf("--action %q: %w", s, err)
		}
		a.Params = params
		out = append(out, a)
	}
	return out, nil
}

// printCharmActions prints what each action came to, as `fixpoint run`
// prints one, and returns the first that failed, if any.
func printCharmActions(w io.Writer, acts []*model.Action) *model.Action {
	var failed *model.Action
	for _, a := range acts {
		fmt.Fprintf(w, "\naction %s on %s: %s", a.Name, a.Unit, a.Status)
		if a.Message != "" {
			fmt.Fprintf(w, ": %s", a.Message)
		}
		fmt.Fprintln(w)
		printAction(w, w, a, time.UTC)
		if a.Status == model.ActionFailed && failed == nil {
			failed = a
		}
	}
	return failed
}
