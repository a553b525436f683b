package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"sort"
	"strconv"
)

// SeenRelations are the relations a unit saw, by relation id, held as one
// slice sorted by id: a unit is in a few relations, and every unit keeps
// its Seen in the replicated state, where a Go map's groups would cost
// several times the records. Built once (Set) and immutable after: Get
// returns a record inside the slice. The zero value has none.
//
// Its JSON is that of map[int]*SeenRelation, byte for byte: an object
// keyed by the ids in decimal, in the order encoding/json sorts them (as
// strings), so that states, snapshots and results read and write as
// before.
type SeenRelations struct{ rs []seenAt }

// seenAt is one relation of SeenRelations.
type seenAt struct {
	id int
	r  SeenRelation
}

// Len is how many relations there are.
func (s SeenRelations) Len() int { return len(s.rs) }

// IsZero reports whether there are none (encoding/json's omitzero).
func (s SeenRelations) IsZero() bool { return len(s.rs) == 0 }

func (s SeenRelations) find(id int) (int, bool) {
	return slices.BinarySearchFunc(s.rs, id, func(e seenAt, id int) int { return e.id - id })
}

// Get returns relation id's record, nil if the unit did not see it. The
// record is shared: callers never change it.
func (s SeenRelations) Get(id int) *SeenRelation {
	if i, ok := s.find(id); ok {
		return &s.rs[i].r
	}
	return nil
}

// Has reports whether the unit saw relation id.
func (s SeenRelations) Has(id int) bool {
	_, ok := s.find(id)
	return ok
}

// All yields the relations in rising id order.
func (s SeenRelations) All() iter.Seq2[int, *SeenRelation] {
	return func(yield func(int, *SeenRelation) bool) {
		for i := range s.rs {
			if !yield(s.rs[i].id, &s.rs[i].r) {
				return
			}
		}
	}
}

// Set records relation id as sr, replacing any record of it. It is for
// the one building a Seen, before anyone reads it.
func (s *SeenRelations) Set(id int, sr SeenRelation) {
	i, ok := s.find(id)
	if ok {
		s.rs[i].r = sr
		return
	}
	s.rs = slices.Insert(s.rs, i, seenAt{id: id, r: sr})
}

// NewSeenRelations holds m's records (nil ones are left out).
func NewSeenRelations(m map[int]*SeenRelation) SeenRelations {
	var s SeenRelations
	s.rs = make([]seenAt, 0, len(m))
	for id, sr := range m {
		if sr != nil {
			s.rs = append(s.rs, seenAt{id: id, r: *sr})
		}
	}
	slices.SortFunc(s.rs, func(a, b seenAt) int { return a.id - b.id })
	if len(s.rs) == 0 {
		s.rs = nil
	}
	return s
}

// MarshalJSON writes the relations as map[int]*SeenRelation would.
func (s SeenRelations) MarshalJSON() ([]byte, error) {
	return marshalByID(len(s.rs), func(i int) (int, any) { return s.rs[i].id, &s.rs[i].r })
}

// marshalByID writes n values, at(i) giving the i-th's id and value, as
// encoding/json writes a map[int]V: an object keyed by the ids in decimal,
// sorted as strings ("10" before "2"). The values are written without
// HTML escaping, which the encoder that called MarshalJSON adds if it
// escapes: escaped here, an encoder that does not would print it.
func marshalByID(n int, at func(i int) (int, any)) ([]byte, error) {
	keys := make([]string, n)
	order := make([]int, n)
	for i := range n {
		id, _ := at(i)
		keys[i], order[i] = strconv.Itoa(id), i
	}
	sort.Slice(order, func(a, b int) bool { return keys[order[a]] < keys[order[b]] })
	var buf, val bytes.Buffer
	enc := json.NewEncoder(&val)
	enc.SetEscapeHTML(false)
	buf.WriteByte('{')
	for k, i := range order {
		if k > 0 {
			buf.WriteByte(',')
		}
		buf.WriteByte('"')
		buf.WriteString(keys[i])
		buf.WriteString(`":`)
		_, v := at(i)
		val.Reset()
		if err := enc.Encode(v); err != nil {
			return nil, fmt.Errorf("%s: %w", keys[i], err)
		}
		buf.Write(bytes.TrimSuffix(val.Bytes(), []byte{'\n'}))
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes (and null, as none).
func (s *SeenRelations) UnmarshalJSON(data []byte) error {
	var m map[int]*SeenRelation
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*s = NewSeenRelations(m)
	return nil
}
