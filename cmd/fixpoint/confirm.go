package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// removals lists the changes of a plan that take something away.
func removals(changes []model.Change) []model.Change {
	var out []model.Change
	for _, c := range changes {
		if c.Removes() {
			out = append(out, c)
		}
	}
	return out
}

// removalSummary counts what removals take away: "1 service, 3 units, 1
// relation, 1 secret".
func removalSummary(rm []model.Change) string {
	services, units, relations, secrets := 0, 0, 0, 0
	for _, c := range rm {
		switch c.Kind {
		case model.RemoveService:
			services++
			units += len(c.Units)
		case model.RemoveUnits:
			units += len(c.Units)
		case model.RemoveRelation:
			relations++
		case model.RemoveSecret:
			secrets++
		}
	}
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{services, "service"}, {units, "unit"}, {relations, "relation"}, {secrets, "secret"}} {
		if p.n == 1 {
			parts = append(parts, "1 "+p.what)
		} else if p.n > 1 {
			parts = append(parts, model.Thousands(p.n)+" "+p.what+"s")
		}
	}
	return strings.Join(parts, ", ")
}

// confirmRemovals is apply's guard on a plan that removes services,
// relations, units or user secrets: with --yes it lets it through; on a terminal it
// shows the plan and asks; otherwise it shows the plan and refuses with
// exit 2, so that a script never removes what it did not name.
type confirmRemovals struct {
	yes         bool
	interactive bool // stdin and stdout are a terminal
	in          io.Reader
	out         io.Writer
}

// newConfirm returns the guard of apply for the process's terminal.
func newConfirm(yes bool) *confirmRemovals {
	return &confirmRemovals{yes: yes, interactive: isTerminal(os.Stdin) && isTerminal(os.Stdout), in: os.Stdin, out: os.Stdout}
}

// check lets plan through or refuses it; printed says whether it showed
// the plan, which then need not be shown again.
func (g *confirmRemovals) check(plan *api.Plan) (printed bool, err error) {
	rm := removals(plan.Changes)
	if g == nil || g.yes || len(rm) == 0 {
		return false, nil
	}
	for _, ch := range plan.Changes {
		fmt.Fprintln(g.out, ch.String())
	}
	what := removalSummary(rm)
	if !g.interactive {
		return true, exitf(exitChanges, "not applied: this plan removes %s (the lines starting with -); pass --yes to apply it", what)
	}
	fmt.Fprintf(g.out, "This removes %s. Apply? [y/N] ", what)
	line, _ := bufio.NewReader(g.in).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return true, exitf(exitChanges, "not applied: the removal of %s was not confirmed", what)
}
