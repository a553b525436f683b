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
}

type memberKey struct {
	relation int
	unit     string
}

// NewMembers returns an empty Members.
func NewMembers() *Members { return &Members{frags: map[memberKey][]byte{}} }

// appendUnits appends a relation's members as encoding/json writes a map
// of bags: each member's `"unit":{...}` from m when it was encoded
// before.
func (m *Members) appendUnits(b []byte, relation int, units map[string]map[string]string) []byte {
	if m == nil || units == nil {
		return appendBags(b, units)
	}
	var small [128]string
	names := small[:0]
	for name := range units {
		names = append(names, name)
	}
	slices.Sort(names)
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
