package model

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"
)

// Outputs are a unit's WaveOutputs: for each universe hash reconciled in
// its wave, the hash of what the hook returned for it. A wave holds a
// few, so they are a slice sorted by hash rather than a map, which costs
// several times as much per unit; encoded they are the JSON object a
// map[string]string is, so that the replicated bytes do not depend on
// the choice. A value is never changed in place (With copies), so that a
// snapshot's Clone may share it.
type Outputs []HashOutput

// HashOutput is one universe hash and the hash of its hook's output.
type HashOutput struct {
	Hash, Output string
}

func (o Outputs) find(hash string) (int, bool) {
	return slices.BinarySearchFunc(o, hash, func(e HashOutput, h string) int { return strings.Compare(e.Hash, h) })
}

// Get returns the output recorded for hash.
func (o Outputs) Get(hash string) (string, bool) {
	if i, ok := o.find(hash); ok {
		return o[i].Output, true
	}
	return "", false
}

// With returns a copy of o with hash's output set to out.
func (o Outputs) With(hash, out string) Outputs {
	i, ok := o.find(hash)
	n := make(Outputs, len(o), len(o)+1)
	copy(n, o)
	if ok {
		n[i].Output = out
		return n
	}
	return slices.Insert(n, i, HashOutput{Hash: hash, Output: out})
}

// MarshalJSON encodes o as encoding/json encodes a map[string]string:
// an object with its keys sorted. Strings are written without HTML
// escapes, which the encoder that calls it adds as it would to a map's.
func (o Outputs) MarshalJSON() ([]byte, error) {
	if o == nil {
		return []byte("null"), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	str := func(s string) error {
		if err := enc.Encode(s); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
		return nil
	}
	buf.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := str(e.Hash); err != nil {
			return nil, err
		}
		buf.WriteByte(':')
		if err := str(e.Output); err != nil {
			return nil, err
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON decodes the object MarshalJSON writes (or null).
func (o *Outputs) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if m == nil {
		*o = nil
		return nil
	}
	out := make(Outputs, 0, len(m))
	for h, v := range m {
		out = append(out, HashOutput{Hash: h, Output: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Hash < out[j].Hash })
	*o = out
	return nil
}
