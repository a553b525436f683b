package model

import (
	"maps"
	"slices"
)

// Clone returns a copy of the replicated part of s that later commands
// applied to s do not change, for encoding a snapshot outside the lock
// that commands take. It copies the objects (a unit's record, a service,
// a relation, a machine) and the top-level maps, and nothing below them:
// the model never edits a map or record below an object in place, it
// replaces it (withEntry, updateBag, a new Seen, a new UnitError), so the
// copy may share them. Copying is then a small part of what encoding
// costs, in time and in memory. A change to the model that edits one of
// those in place breaks snapshots (TestSnapshotPersistsWhileApplying under
// -race shows it); TestCloneSharesNothingMutable lists the fields.
//
// The clone is for reading and encoding only: it has no lookups.
func (s *State) Clone() *State {
	c := *s
	c.idx = nil
	c.Charms = maps.Clone(s.Charms)
	c.Services = cloneObjects(s.Services)
	c.Units = cloneObjects(s.Units)
	c.Relations = cloneObjects(s.Relations)
	c.Machines = cloneObjects(s.Machines)
	c.Secrets = maps.Clone(s.Secrets)
	c.UnitNumbers = maps.Clone(s.UnitNumbers)
	c.Requests = maps.Clone(s.Requests)
	c.RequestLog = slices.Clone(s.RequestLog)
	c.RequestDigests = maps.Clone(s.RequestDigests)
	c.Actions = maps.Clone(s.Actions)
	c.ActiveActions = maps.Clone(s.ActiveActions)
	return &c
}

// cloneObjects copies a map of objects, each object by value, all of
// them in one allocation.
func cloneObjects[K comparable, V any](m map[K]*V) map[K]*V {
	if m == nil {
		return nil
	}
	out := make(map[K]*V, len(m))
	slab := make([]V, 0, len(m))
	for k, v := range m {
		slab = append(slab, *v)
		out[k] = &slab[len(slab)-1]
	}
	return out
}

// withEntry returns a copy of m with k set to v. The model changes the
// maps below its objects only this way, so that a snapshot's Clone may
// share them.
func withEntry[K comparable, V any](m map[K]V, k K, v V) map[K]V {
	out := make(map[K]V, len(m)+1)
	maps.Copy(out, m)
	out[k] = v
	return out
}

// withoutEntry returns m without k: m itself if k is not in it, else a
// copy (nil once empty). See withEntry.
func withoutEntry[K comparable, V any](m map[K]V, k K) map[K]V {
	if _, ok := m[k]; !ok {
		return m
	}
	if len(m) == 1 {
		return nil
	}
	out := make(map[K]V, len(m)-1)
	for key, v := range m {
		if key != k {
			out[key] = v
		}
	}
	return out
}
