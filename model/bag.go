package model

import (
	"encoding/json"
	"iter"
	"maps"
	"slices"
	"strconv"
	"unique"
)

// Bag is a settings map (a unit's relation settings, a service's bag, its
// leader data) with the index that last changed it. It is the largest
// part of the state per unit, so it keeps its pairs packed: its keys, in
// sorted order, as one interned string that every bag with the same keys
// shares (the units of a charm write the same keys), and its values, in
// the same order, as one string of its own. Each is a sequence of items,
// each an unsigned varint length followed by that many bytes.
//
// A Bag is immutable once made (NewBag): a change makes a new one, and the
// state replaces a bag whole (updateBag), which lets State.Clone share
// bags. Its JSON is that of the settings map: {"data":{...},"rev":N}, data
// left out when empty.
type Bag struct {
	// keys is the zero Handle for an empty bag.
	keys unique.Handle[string]
	vals string
	// Rev is the index of the command that last changed the bag.
	Rev uint64
}

// NewBag returns a bag of data's pairs at revision rev. It keeps no
// reference to data.
func NewBag(data map[string]string, rev uint64) *Bag {
	b := &Bag{Rev: rev}
	if len(data) == 0 {
		return b
	}
	keys := slices.Sorted(maps.Keys(data))
	var kb, vb []byte
	for _, k := range keys {
		kb = appendItem(kb, k)
		vb = appendItem(vb, data[k])
	}
	b.keys = unique.Make(string(kb))
	b.vals = string(vb)
	return b
}

// appendItem appends s as one item: its length as a varint, then s.
func appendItem(b []byte, s string) []byte {
	n := uint64(len(s))
	for n >= 0x80 {
		b = append(b, byte(n)|0x80)
		n >>= 7
	}
	return append(append(b, byte(n)), s...)
}

// nextItem splits the first item off s, which appendItem made.
func nextItem(s string) (item, rest string) {
	var n uint64
	i := 0
	for shift := 0; ; shift += 7 {
		c := s[i]
		i++
		n |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
	}
	end := i + int(n)
	return s[i:end], s[end:]
}

// packed returns b's keys and values, empty for a nil or empty bag.
func (b *Bag) packed() (keys, vals string) {
	if b == nil || b.keys == (unique.Handle[string]{}) {
		return "", ""
	}
	return b.keys.Value(), b.vals
}

// All yields b's pairs in key order (bytewise). A nil bag has none.
func (b *Bag) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		keys, vals := b.packed()
		for keys != "" {
			var k, v string
			k, keys = nextItem(keys)
			v, vals = nextItem(vals)
			if !yield(k, v) {
				return
			}
		}
	}
}

// Get returns the value of key k and whether b has it.
func (b *Bag) Get(k string) (string, bool) {
	for key, v := range b.All() {
		if key == k {
			return v, true
		}
		if key > k {
			break
		}
	}
	return "", false
}

// Len is the number of b's pairs.
func (b *Bag) Len() int {
	n := 0
	keys, _ := b.packed()
	for keys != "" {
		_, keys = nextItem(keys)
		n++
	}
	return n
}

// Map returns b's pairs as a new map the caller may change; nil when b
// has none.
func (b *Bag) Map() map[string]string {
	n := b.Len()
	if n == 0 {
		return nil
	}
	out := make(map[string]string, n)
	for k, v := range b.All() {
		out[k] = v
	}
	return out
}

// EqualMap says whether b holds exactly m's pairs; a nil or empty bag
// equals a nil or empty map.
func (b *Bag) EqualMap(m map[string]string) bool {
	n := 0
	for k, v := range b.All() {
		if w, ok := m[k]; !ok || w != v {
			return false
		}
		n++
	}
	return n == len(m)
}

// bagJSON is how a Bag is written: the settings map's encoding, which
// snapshots and the Raft log hold.
type bagJSON struct {
	Data map[string]string `json:"data,omitempty"`
	Rev  uint64            `json:"rev"`
}

// MarshalJSON writes b as encoding/json writes bagJSON. Strings are quoted
// without HTML escaping: encoding/json escapes a Marshaler's <, > and &
// itself when its encoder does, so b's bytes match the map's under
// either setting.
func (b Bag) MarshalJSON() ([]byte, error) {
	keys, vals := b.packed()
	out := make([]byte, 0, len(keys)+len(vals)+32)
	out = append(out, '{')
	if keys != "" {
		out = append(out, `"data":{`...)
		for first := true; keys != ""; first = false {
			var k, v string
			k, keys = nextItem(keys)
			v, vals = nextItem(vals)
			if !first {
				out = append(out, ',')
			}
			out = AppendJSONString(out, k, false)
			out = append(out, ':')
			out = AppendJSONString(out, v, false)
		}
		out = append(out, "},"...)
	}
	out = append(out, `"rev":`...)
	out = strconv.AppendUint(out, b.Rev, 10)
	return append(out, '}'), nil
}

// UnmarshalJSON reads b as encoding/json reads bagJSON into b's pairs
// and revision: null changes nothing, a rev left out keeps b's, and data
// adds to b's pairs.
func (b *Bag) UnmarshalJSON(data []byte) error {
	j := bagJSON{Data: b.Map(), Rev: b.Rev}
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*b = *NewBag(j.Data, j.Rev)
	return nil
}
