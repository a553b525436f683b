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

// byID holds values by relation id in one slice sorted by id: what a unit
// keeps per relation (its bags, what it saw) is a few entries on every
// unit of the replicated state, where a Go map's groups would cost
// several times the entries. Its JSON is that of map[int]V, byte for byte
// (marshal). The zero value has none.
type byID[V any] []idEntry[V]

// idEntry is one relation's value of a byID.
type idEntry[V any] struct {
	id int
	v  V
}

// newByID holds m's values, those keep accepts.
func newByID[V any](m map[int]V, keep func(V) bool) byID[V] {
	var s byID[V]
	for id, v := range m {
		if keep(v) {
			s = append(s, idEntry[V]{id, v})
		}
	}
	slices.SortFunc(s, func(a, b idEntry[V]) int { return a.id - b.id })
	return s
}

// find is where id is, or would go, in s.
func (s byID[V]) find(id int) (int, bool) {
	return slices.BinarySearchFunc(s, id, func(e idEntry[V], id int) int { return e.id - id })
}

// at returns id's value in place, nil if s has none.
func (s byID[V]) at(id int) *V {
	if i, ok := s.find(id); ok {
		return &s[i].v
	}
	return nil
}

// all yields the values in place, in rising id order.
func (s byID[V]) all() iter.Seq2[int, *V] {
	return func(yield func(int, *V) bool) {
		for i := range s {
			if !yield(s[i].id, &s[i].v) {
				return
			}
		}
	}
}

// with returns s with id's value set to v, in a new slice: s is left as
// it was.
func (s byID[V]) with(id int, v V) byID[V] {
	i, ok := s.find(id)
	out := make(byID[V], len(s), len(s)+1)
	copy(out, s)
	if ok {
		out[i].v = v
		return out
	}
	return slices.Insert(out, i, idEntry[V]{id, v})
}

// without returns s without id, in a new slice: s itself if it has no id.
func (s byID[V]) without(id int) byID[V] {
	i, ok := s.find(id)
	if !ok {
		return s
	}
	if len(s) == 1 {
		return nil
	}
	return slices.Delete(slices.Clone(s), i, i+1)
}

// marshal writes s as encoding/json writes a map[int]V: an object keyed by
// the ids in decimal, sorted as strings ("10" before "2"). The values are
// written without HTML escaping, which the encoder that called MarshalJSON
// adds if it escapes: escaped here, an encoder that does not would print
// it.
func (s byID[V]) marshal() ([]byte, error) {
	keys := make([]string, len(s))
	order := make([]int, len(s))
	for i, e := range s {
		keys[i], order[i] = strconv.Itoa(e.id), i
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
		val.Reset()
		if err := enc.Encode(&s[i].v); err != nil {
			return nil, fmt.Errorf("%s: %w", keys[i], err)
		}
		buf.Write(bytes.TrimSuffix(val.Bytes(), []byte{'\n'}))
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
