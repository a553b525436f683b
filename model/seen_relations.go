package model

import (
	"encoding/json"
	"iter"
	"slices"
)

// SeenRelations are the relations a unit saw, by relation id (byID).
// Built once (Set) and immutable after: Get returns a record inside the
// slice. The zero value has none.
//
// Its JSON is that of map[int]*SeenRelation, byte for byte, so that
// states, snapshots and results read and write as before.
type SeenRelations struct{ rs byID[SeenRelation] }

// NewSeenRelations holds m's records (nil ones are left out).
func NewSeenRelations(m map[int]*SeenRelation) SeenRelations {
	s := newByID(m, func(sr *SeenRelation) bool { return sr != nil })
	rs := make(byID[SeenRelation], len(s))
	for i, e := range s {
		rs[i] = idEntry[SeenRelation]{e.id, *e.v}
	}
	if len(rs) == 0 {
		rs = nil
	}
	return SeenRelations{rs}
}

// Len is how many relations there are.
func (s SeenRelations) Len() int { return len(s.rs) }

// IsZero reports whether there are none (encoding/json's omitzero).
func (s SeenRelations) IsZero() bool { return len(s.rs) == 0 }

// Get returns relation id's record, nil if the unit did not see it. The
// record is shared: callers never change it.
func (s SeenRelations) Get(id int) *SeenRelation { return s.rs.at(id) }

// Has reports whether the unit saw relation id.
func (s SeenRelations) Has(id int) bool {
	_, ok := s.rs.find(id)
	return ok
}

// All yields the relations in rising id order.
func (s SeenRelations) All() iter.Seq2[int, *SeenRelation] { return s.rs.all() }

// Set records relation id as sr, replacing any record of it. It is for
// the one building a Seen, before anyone reads it.
func (s *SeenRelations) Set(id int, sr SeenRelation) {
	i, ok := s.rs.find(id)
	if ok {
		s.rs[i].v = sr
		return
	}
	s.rs = slices.Insert(s.rs, i, idEntry[SeenRelation]{id, sr})
}

// MarshalJSON writes the relations as map[int]*SeenRelation would.
func (s SeenRelations) MarshalJSON() ([]byte, error) { return s.rs.marshal() }

// UnmarshalJSON reads what MarshalJSON writes (and null, as none).
func (s *SeenRelations) UnmarshalJSON(data []byte) error {
	var m map[int]*SeenRelation
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*s = NewSeenRelations(m)
	return nil
}
