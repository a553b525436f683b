package model

import (
	"encoding/json"
	"iter"
	"slices"
)

// RelBags are a unit's settings bags by relation id, held as one slice
// sorted by id: a unit is in a few relations, and every unit of the
// replicated state has them on every node, where a Go map's groups would
// cost several times the entries. RelBags are immutable: With and
// Without return new ones, so that a snapshot's copy of the state shares
// them (clone.go). The zero value has none.
//
// Its JSON is that of map[int]*Bag, byte for byte (marshalByID).
type RelBags struct{ bs []relBag }

// relBag is one relation's bag of RelBags.
type relBag struct {
	id int
	b  *Bag
}

// NewRelBags holds m's bags.
func NewRelBags(m map[int]*Bag) RelBags {
	if len(m) == 0 {
		return RelBags{}
	}
	bs := make([]relBag, 0, len(m))
	for id, b := range m {
		bs = append(bs, relBag{id, b})
	}
	slices.SortFunc(bs, func(a, b relBag) int { return a.id - b.id })
	return RelBags{bs}
}

// Len is how many relations have a bag.
func (r RelBags) Len() int { return len(r.bs) }

// IsZero reports whether there are none (encoding/json's omitzero).
func (r RelBags) IsZero() bool { return len(r.bs) == 0 }

func (r RelBags) find(id int) (int, bool) {
	return slices.BinarySearchFunc(r.bs, id, func(e relBag, id int) int { return e.id - id })
}

// Get returns relation id's bag, nil if there is none.
func (r RelBags) Get(id int) *Bag {
	if i, ok := r.find(id); ok {
		return r.bs[i].b
	}
	return nil
}

// All yields the bags in rising id order.
func (r RelBags) All() iter.Seq2[int, *Bag] {
	return func(yield func(int, *Bag) bool) {
		for _, e := range r.bs {
			if !yield(e.id, e.b) {
				return
			}
		}
	}
}

// With returns r with relation id's bag set to b; r is left as it was.
func (r RelBags) With(id int, b *Bag) RelBags {
	i, ok := r.find(id)
	out := make([]relBag, len(r.bs), len(r.bs)+1)
	copy(out, r.bs)
	if ok {
		out[i].b = b
		return RelBags{out}
	}
	return RelBags{slices.Insert(out, i, relBag{id, b})}
}

// Without returns r without relation id's bag: r itself if it has none.
func (r RelBags) Without(id int) RelBags {
	i, ok := r.find(id)
	if !ok {
		return r
	}
	if len(r.bs) == 1 {
		return RelBags{}
	}
	return RelBags{slices.Delete(slices.Clone(r.bs), i, i+1)}
}

// MarshalJSON writes the bags as map[int]*Bag would.
func (r RelBags) MarshalJSON() ([]byte, error) {
	return marshalByID(len(r.bs), func(i int) (int, any) { return r.bs[i].id, r.bs[i].b })
}

// UnmarshalJSON reads what MarshalJSON writes (and null, as none).
func (r *RelBags) UnmarshalJSON(data []byte) error {
	var m map[int]*Bag
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*r = NewRelBags(m)
	return nil
}
