package engine

import (
	"github.com/fixpoint/fixpoint/charmapi"
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
