package events

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/fixpoint/fixpoint/charmapi"
)

// Lives a Snapshot may carry; they match model.Alive and model.Dying.
const (
	Alive = "alive"
	Dying = "dying"
)

// Snapshot is what a unit saw in one universe, reduced to version tokens so
// that both the replicated state (revisions) and universe JSON files
// (content hashes) can give it. Two tokens are compared for equality only:
// a token that differs means "moved", whatever its form.
type Snapshot struct {
	// Unit is the unit's own name; relation-departed names it as the
	// departing unit when the unit itself is leaving.
	Unit string
	// Installed is false before the first successful reconcile.
	Installed bool
	// Life is Alive or Dying ("" reads as Alive).
	Life  string
	Charm string
	// Resources is model.ResourcesToken of the service's resources.
	Resources string
	// Config is the version token of the unit's config.
	Config string
	// Address is the unit's own address; "" where it is not known (a Seen
	// recorded before addresses were), which fires nothing.
	Address string
	Leader  bool
	// LeaderData is the version token of the service's leader data.
	LeaderData string
	// Relations are keyed by ident, "endpoint:id".
	Relations map[string]*RelSnap
	// Storage are the unit's storage instances ("data/0"), in the order
	// they were attached.
	Storage []string
	// Boot is the reboot count of the unit's machine (juju-reboot).
	Boot int
}

// RelSnap is one relation as a unit saw it.
type RelSnap struct {
	ID       int
	Endpoint string
	// RemoteApp is the remote service (the unit's own for a peer relation).
	RemoteApp string
	// Peer marks a peer relation: Juju never breaks those.
	Peer bool
	// Alive is false for a relation that is dying: it is torn down as if
	// it were gone.
	Alive bool
	// Members maps each remote member in scope to its settings token.
	Members map[string]string
	// App is the token of the remote service's application bag; "" means
	// never written (or empty), which fires nothing.
	App string
}

// Ident is the relation's name as hooks see it, "endpoint:id".
func (r *RelSnap) Ident() string { return r.Endpoint + ":" + strconv.Itoa(r.ID) }

// dying reports whether the unit is on its way out.
func (s *Snapshot) dying() bool { return s.Life == Dying }

// relationsByID returns the snapshot's relations ordered by id.
func (s *Snapshot) relationsByID() []*RelSnap {
	out := make([]*RelSnap, 0, len(s.Relations))
	for _, r := range s.Relations {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ID != out[j].ID {
			return out[i].ID < out[j].ID
		}
		return out[i].Endpoint < out[j].Endpoint
	})
	return out
}

// Validate checks that every relation is filed under its own ident, so that
// the two sides of a diff line up.
func (s *Snapshot) Validate() error {
	for ident, r := range s.Relations {
		if r == nil {
			return fmt.Errorf("relation %s: no snapshot", ident)
		}
		if r.Ident() != ident {
			return fmt.Errorf("relation filed as %s has ident %s", ident, r.Ident())
		}
	}
	return nil
}

// sortedUnits returns the keys of m ordered by service, then numerically by
// unit number, so web/2 comes before web/10: the order model.UnitLess uses
// everywhere else. (Juju's relation resolver sorts names as plain strings,
// which puts web/10 first; no charm can depend on that detail.)
func sortedUnits(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for u := range m {
		out = append(out, u)
	}
	charmapi.SortUnits(out)
	return out
}

// serviceOf returns the service part of a unit name.
func serviceOf(unit string) string {
	s := charmapi.ServiceOf(unit)
	return s
}
