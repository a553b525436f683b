package model

import (
	"encoding/json"
	"iter"
)

// RelBags are a unit's settings bags by relation id (byID). They are
// immutable: With and Without return new ones, so that a snapshot's copy
// of the state shares them (clone.go). The zero value has none.
//
// Its JSON is that of map[int]*Bag, byte for byte.
type RelBags struct{ bs byID[*Bag] }

// NewRelBags holds m's bags.
func NewRelBags(m map[int]*Bag) RelBags {
	return RelBags{newByID(m, func(*Bag) bool { return true })}
}

// Len is how many relations have a bag.
func (r RelBags) Len() int { return len(r.bs) }

// IsZero reports whether there are none (encoding/json's omitzero).
func (r RelBags) IsZero() bool { return len(r.bs) == 0 }

// Get returns relation id's bag, nil if there is none.
func (r RelBags) Get(id int) *Bag {
	if b := r.bs.at(id); b != nil {
		return *b
	}
	return nil
}

// All yields the bags in rising id order.
func (r RelBags) All() iter.Seq2[int, *Bag] {
	return func(yield func(int, *Bag) bool) {
		for id, b := range r.bs.all() {
			if !yield(id, *b) {
				return
			}
		}
	}
}

// With returns r with relation id's bag set to b; r is left as it was.
func (r RelBags) With(id int, b *Bag) RelBags { return RelBags{r.bs.with(id, b)} }

// Without returns r without relation id's bag: r itself if it has none.
func (r RelBags) Without(id int) RelBags { return RelBags{r.bs.without(id)} }

// MarshalJSON writes the bags as map[int]*Bag would.
func (r RelBags) MarshalJSON() ([]byte, error) { return r.bs.marshal() }

// UnmarshalJSON reads what MarshalJSON writes (and null, as none).
func (r *RelBags) UnmarshalJSON(data []byte) error {
	var m map[int]*Bag
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*r = NewRelBags(m)
	return nil
}
