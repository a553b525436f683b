package charmapi

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// This file holds read accessors over the universe. They never fail and
// are safe on a nil *Relation, so that
//
//	for _, unit := range u.Relation("db").Members() { ... }
//
// simply does nothing when the unit has no db relation.

// ServiceOf returns the service of a unit name: "web" for "web/3".
func ServiceOf(unit string) string {
	svc, _, _ := strings.Cut(unit, "/")
	return svc
}

// UnitNumber returns N of "service/N", or -1 when unit is not of that form.
func UnitNumber(unit string) int {
	i := strings.LastIndexByte(unit, '/')
	if i < 0 {
		return -1
	}
	n, err := strconv.Atoi(unit[i+1:])
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// UnitLess orders unit names by service, then by unit number, so that
// web/2 comes before web/10. It is the order the engine lists units in,
// and the order a hook should use wherever its output lists units.
func UnitLess(a, b string) bool {
	sa, sb := ServiceOf(a), ServiceOf(b)
	if sa != sb {
		return sa < sb
	}
	na, nb := UnitNumber(a), UnitNumber(b)
	if na != nb {
		return na < nb
	}
	return a < b
}

// SortUnits sorts unit names in place with UnitLess.
func SortUnits(units []string) {
	slices.SortFunc(units, func(a, b string) int {
		switch {
		case UnitLess(a, b):
			return -1
		case UnitLess(b, a):
			return 1
		}
		return 0
	})
}

// JoinUnits returns the unit names sorted with UnitLess and joined by
// single spaces, e.g. for an "allowed-units" setting. The input is not
// modified. Sorting makes the value canonical: the same set of units
// always gives the same bytes, whatever order they were found in.
func JoinUnits(units []string) string {
	s := slices.Clone(units)
	SortUnits(s)
	return strings.Join(s, " ")
}

// UnitNumber returns N of this unit's name "service/N".
func (u *Universe) UnitNumber() int { return UnitNumber(u.Unit) }

// Dying reports whether this is the unit's last reconcile before it is
// removed: it sees no relations any more and should clean up.
func (u *Universe) Dying() bool { return u.Life == "dying" }

// RelationByIdent returns the relation with the given ident ("db:7"), or
// nil.
func (u *Universe) RelationByIdent(ident string) *Relation {
	for i := range u.Relations {
		if u.Relations[i].Ident == ident {
			return &u.Relations[i]
		}
	}
	return nil
}

// HasEvent reports whether the legacy events of this reconcile include
// hook, e.g. "install" or "db-relation-departed". A reconcile hook rarely
// needs events: what it returns should depend on the universe alone. They
// are there for one-off work (a first install, a departing unit's
// cleanup) and for old hooks run by the adapter.
func (u *Universe) HasEvent(hook string) bool {
	for _, e := range u.Events {
		if e.Hook == hook {
			return true
		}
	}
	return false
}

// File returns where the unit keeps the file name: in its own directory,
// u.Dir. A hook process runs in that directory and has no Dir, so there
// File returns name unchanged; when the simulator calls a reconcile
// function in-process it sets Dir to a directory of the unit's own. Use it
// for every file a hook writes, so that tests of many units do not share
// one file.
func (u *Universe) File(name string) string {
	if u.Dir != "" && !filepath.IsAbs(name) {
		return filepath.Join(u.Dir, name)
	}
	return name
}

// IsPeer reports whether the relation is over a peer endpoint: its members
// are the other units of the unit's own service.
func (r *Relation) IsPeer() bool { return r != nil && r.Role == "peer" }

// Members returns the remote units in the relation, sorted with UnitLess.
// For a peer relation these are the unit's peers, never itself.
func (r *Relation) Members() []string {
	if r == nil {
		return nil
	}
	out := make([]string, 0, len(r.Units))
	for name := range r.Units {
		out = append(out, name)
	}
	SortUnits(out)
	return out
}

// Member returns a remote member's settings, or nil when unit is not a
// member.
func (r *Relation) Member(unit string) map[string]string {
	if r == nil {
		return nil
	}
	return r.Units[unit]
}

// Get returns one setting of a remote member, or "" when the member or
// the key is missing.
func (r *Relation) Get(unit, key string) string {
	return r.Member(unit)[key]
}

// MembersWith returns, sorted with UnitLess, the remote members that set
// key to a non-empty value.
func (r *Relation) MembersWith(key string) []string {
	var out []string
	for _, name := range r.Members() {
		if r.Units[name][key] != "" {
			out = append(out, name)
		}
	}
	return out
}

// RemoteAppValue returns one key of the remote service's application bag,
// or "". Nil-safe, like the other accessors.
func (r *Relation) RemoteAppValue(key string) string {
	if r == nil {
		return ""
	}
	return r.RemoteApp[key]
}

// AppValue returns one key of this unit's service's application bag (set
// by its leader), or "".
func (r *Relation) AppValue(key string) string {
	if r == nil {
		return ""
	}
	return r.App[key]
}
