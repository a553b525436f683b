package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// TestConfirmRemovalsOnATerminal: on a terminal apply shows the plan and
// applies a removal only on "y" or "yes"; anything else, or no answer,
// refuses it with exit 2. A plan that removes nothing is not asked about.
func TestConfirmRemovalsOnATerminal(t *testing.T) {
	plan := &api.Plan{Changes: []model.Change{
		{Kind: model.SetConfig, Service: "db", Key: "k", Old: "1", New: "2"},
		{Kind: model.RemoveUnits, Service: "web", Units: []string{"web/1", "web/2"}},
	}}
	for answer, ok := range map[string]bool{"y\n": true, "YES\n": true, "n\n": false, "\n": false, "": false, "yes please\n": false} {
		var out bytes.Buffer
		g := &confirmRemovals{interactive: true, in: strings.NewReader(answer), out: &out}
		printed, err := g.check(plan)
		var ee *exitError
		switch {
		case !printed || !strings.Contains(out.String(), "- units web/1, web/2 (go dying)") || !strings.Contains(out.String(), "This removes 2 units. Apply? [y/N]"):
			t.Errorf("answer %q: printed %v:\n%s", answer, printed, out.String())
		case ok && err != nil:
			t.Errorf("answer %q: %v", answer, err)
		case !ok && (!errors.As(err, &ee) || ee.code != exitChanges):
			t.Errorf("answer %q: %v, want exit %d", answer, err, exitChanges)
		}
	}
	g := &confirmRemovals{interactive: true, in: strings.NewReader(""), out: &bytes.Buffer{}}
	if printed, err := g.check(&api.Plan{Changes: plan.Changes[:1]}); printed || err != nil {
		t.Errorf("a plan without removals: printed %v, %v", printed, err)
	}
}
