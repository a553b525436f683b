package model

import (
	"encoding/json"
	"fmt"
	"unique"
)

// Seen records what a unit's last successful reconcile saw: enough to
// derive the legacy events between it and a later universe.
//
// It is kept per unit in the replicated state and carried by every hook
// result, so its size matters: it holds, per relation, the members as
// ranges of unit numbers and one revision mark (SeenRelation.At) instead of
// every member's revision, which made it grow with the square of a
// relation's size.
type Seen struct {
	Life      Life   `json:"life"`
	Charm     string `json:"charm"`
	ConfigRev uint64 `json:"config_rev"`
	Leader    bool   `json:"leader"`
	LeaderRev uint64 `json:"leader_rev"`
	// Address is the unit's own address: Juju runs config-changed when
	// it moves.
	Address string `json:"address,omitempty"`
	// Resources is ResourcesToken of the service's resources: Juju runs
	// upgrade-charm when one changes.
	Resources string        `json:"resources,omitempty"`
	Relations SeenRelations `json:"relations,omitzero"`
	// Storage are the unit's storage instances it saw attached.
	Storage []string `json:"storage,omitempty"`
	// Boot is the reboot count of the unit's machine (Machine.Boots) it
	// saw: a higher one restarts its lifecycle.
	Boot int `json:"boot,omitempty"`
	// Secrets are the Juju secrets the unit could read, by id.
	Secrets map[string]SeenSecret `json:"secrets,omitempty"`
}

// SeenSecret is one secret as a unit last saw it: the latest revision (a
// consumer that tracks an older one gets secret-changed when it moves)
// and, for its owner, the revisions no consumer tracked (each new one
// gets secret-remove). An owner also saw how many rotations came due
// (each new one gets secret-rotate) and, by revision, how many times its
// expiry came due (each new one gets secret-expired).
type SeenSecret struct {
	Latest    int         `json:"latest"`
	Tracked   int         `json:"tracked,omitempty"`
	Owner     bool        `json:"owner,omitempty"`
	Obsolete  []int       `json:"obsolete,omitempty"`
	RotateDue int         `json:"rotate_due,omitempty"`
	Expired   map[int]int `json:"expired,omitempty"`
}

// SeenRelation is one relation as a unit last saw it.
//
// Settings revisions are the Raft indexes that changed the bags, so they
// only grow. At is the highest revision among the members' bags the unit
// saw; every bag the universe showed had its revision at or below At, and
// any later change gets a revision above it. So a member's settings
// changed since iff its bag's revision now is above At (ChangedSince),
// which needs no per-member revision.
type SeenRelation struct {
	Endpoint string `json:"endpoint"`
	// Members are the remote members the unit saw.
	Members Members `json:"units"`
	// At is the highest settings revision among Members when seen.
	At uint64 `json:"at,omitempty"`
	// App is the remote service's bag revision.
	App uint64 `json:"app"`
}

// ChangedSince reports whether a member's settings moved after sr was
// seen, given the revision its bag has now (0 for none).
func (sr *SeenRelation) ChangedSince(rev uint64) bool { return rev > sr.At }

// seenRelationJSON is SeenRelation as it is written, plus the form written
// before the members were compacted.
type seenRelationJSON struct {
	Endpoint string  `json:"endpoint"`
	Members  Members `json:"units"`
	At       uint64  `json:"at,omitempty"`
	App      uint64  `json:"app"`
	// Revisions is the old form: each member's settings revision.
	Revisions map[string]uint64 `json:"members,omitempty"`
}

// UnmarshalJSON reads a SeenRelation, also in the form nodes wrote before
// the members were compacted (a map of member to revision), so that older
// snapshots and log entries still load. That form converts exactly: the
// highest revision it lists is a valid mark, since each listed revision
// was its bag's latest when seen, and any later change is above all of
// them.
func (sr *SeenRelation) UnmarshalJSON(data []byte) error {
	var v seenRelationJSON
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*sr = SeenRelation{Endpoint: intern(v.Endpoint), Members: v.Members, At: v.At, App: v.App}
	if v.Revisions != nil && v.Members.IsEmpty() {
		names := make([]string, 0, len(v.Revisions))
		for name, rev := range v.Revisions {
			names = append(names, name)
			sr.At = max(sr.At, rev)
		}
		sr.Members = NewMembers(names)
	}
	return nil
}

// UnmarshalJSON reads a Seen and shares its strings with the other units'
// (every unit of a service names the same charm and life).
func (s *Seen) UnmarshalJSON(data []byte) error {
	type plain Seen
	var v plain
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*s = Seen(v)
	s.Life, s.Charm, s.Address, s.Resources = Life(intern(string(s.Life))), intern(s.Charm), intern(s.Address), intern(s.Resources)
	return nil
}

// intern returns s sharing its bytes with equal strings interned lately,
// so that the copies a decoder makes per unit do not stay around.
func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// SettingsRev returns the revision of unit's settings in relation id now:
// 0 when it never wrote any; ok is false when the unit is gone.
func (s *State) SettingsRev(id int, unit string) (rev uint64, ok bool) {
	u, ok := s.Units[unit]
	if !ok {
		return 0, false
	}
	if b := u.Settings.Get(id); b != nil {
		return b.Rev, true
	}
	return 0, true
}

// String shows what a unit saw of one relation, for test failures.
func (sr *SeenRelation) String() string {
	return fmt.Sprintf("%s: %s at %d, app %d", sr.Endpoint, sr.Members, sr.At, sr.App)
}
