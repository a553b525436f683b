package unijson

import (
	"slices"
)

// Members keeps the encoded settings of relation members across the
// universes built from one state, where member M of relation R shows the
// same settings, with its address, in every universe that sees it: the
// 100 universes of a 100-unit service with peers hold 9,900 member bags
// but only 100 distinct ones. A Members must not outlive that state nor
// be shared between goroutines.
type Members struct {
	frags map[memberKey][]byte
	// names is, per relation, every member seen so far in key order: a
	// universe's members are found in it in order rather than sorted
	// again, 11 us a universe at 100 members.
	names map[int][]string
	// size is the largest universe encoded so far, room for the next.
	size int
}

type memberKey struct {
	relation int
	unit     string
}

// NewMembers returns an empty Members.
func NewMembers() *Members {
	return &Members{frags: map[memberKey][]byte{}, names: map[int][]string{}}
}

// appendUnits appends a relation's members as encoding/json writes a map
// of bags: each member's `"unit":{...}` from m when it was encoded
// before.
func (m *Members) appendUnits(b []byte, relation int, units map[string]map[string]string) []byte {
	if m == nil || units == nil {
		return appendBags(b, units)
	}
	var small [128]string
	names := m.inOrder(relation, units, small[:0])
	b = append(b, '{')
	for i, name := range names {
		if i > 0 {
			b = append(b, ',')
		}
		k := memberKey{relation, name}
		frag, ok := m.frags[k]
		if !ok {
			start := len(b)
			b = AppendString(b, name)
			b = append(b, ':')
			b = appendBag(b, units[name])
			m.frags[k] = slices.Clone(b[start:])
			continue
		}
		b = append(b, frag...)
	}
	return append(b, '}')
}

// inOrder appends the names of units to names in key order: those of
// the relation's members seen before, in the order kept; a member not
// seen before joins the kept order first.
func (m *Members) inOrder(relation int, units map[string]map[string]string, names []string) []string {
	start := len(names)
	all := m.names[relation]
	for _, name := range all {
		if _, ok := units[name]; ok {
			names = append(names, name)
		}
	}
	if len(names)-start == len(units) {
		return names
	}
	known := len(all)
	for name := range units {
		if _, found := slices.BinarySearch(all[:known], name); !found {
			all = append(all, name)
		}
	}
	slices.Sort(all)
	m.names[relation] = all
	names = names[:start]
	for _, name := range all {
		if _, ok := units[name]; ok {
			names = append(names, name)
		}
	}
	return names
}
