package engine

import (
	"fmt"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/model"
)

// Explanation says why a unit is where it is: the key-by-key difference
// between the universe it last reconciled and the one it would get now,
// the legacy events between them, or why it is in error.
type Explanation struct {
	Unit  string `json:"unit"`
	Phase string `json:"phase"`
	Stale bool   `json:"stale"`
	// Reconciled and Current are the universe hashes.
	Reconciled string `json:"reconciled,omitempty"`
	Current    string `json:"current"`
	// Changes are the keys that differ, when this node still holds the
	// universe last reconciled (it keeps them in memory only).
	Changes []Change         `json:"changes,omitempty"`
	Events  []charmapi.Event `json:"events"`
	Error   *model.UnitError `json:"error,omitempty"`
	Note    string           `json:"note,omitempty"`
}

// Explain says why unit is stale, settled or in error.
func (c *Controller) Explain(unit string) (*Explanation, error) {
	var out *Explanation
	err := c.store.View(func(st *model.State) error {
		v, built, seen, claims := c.disp.current(st, unit)
		u := st.Units[unit]
		if v == nil || built == nil || u == nil {
			return fmt.Errorf("unit %s does not exist", unit)
		}
		uni := schedule.RunUniverse(st, u, built, v.hash, seen)
		status := c.stat.unitStatus(st, unit, u, claims)
		e := &Explanation{Unit: unit, Phase: status.Phase, Stale: v.hash != u.Reconciled, Reconciled: u.Reconciled, Current: v.hash, Events: uni.Events, Error: u.Error}
		switch last := c.stale.lastOf(unit); {
		case last != nil:
			e.Changes = Diff(last, &uni)
			markSecretConfig(st, u.Service, e.Changes)
		case u.Reconciled == "":
			e.Note = "the unit has never reconciled: everything is new to it"
		default:
			e.Note = "this node has not seen the universe last reconciled (it keeps them in memory); the events show what moved"
		}
		if !v.member {
			e.Note = fmt.Sprintf("the unit waits for machine %q to register; until then it sees no relations", u.Machine)
		}
		out = e
		return nil
	})
	return out, err
}
