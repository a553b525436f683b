package model

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestOutputsEncodeAsTheMapDid: a unit's WaveOutputs encode to the bytes
// a map[string]string encoded to, through json.Marshal and through an
// encoder that leaves HTML alone, and decode back to the same outputs,
// so that replicated bytes and snapshots are those of before.
func TestOutputsEncodeAsTheMapDid(t *testing.T) {
	m := map[string]string{"b2": "x", "a1": "<&>", "c3": "é\u2028", "": "q\"uote"}
	var o Outputs
	for _, k := range []string{"c3", "a1", "", "b2"} {
		o = o.With(k, m[k])
	}
	type unitOf[T any] struct {
		W T `json:"wave_outputs,omitempty"`
	}
	for _, escape := range []bool{true, false} {
		enc := func(v any) []byte {
			var buf bytes.Buffer
			e := json.NewEncoder(&buf)
			e.SetEscapeHTML(escape)
			if err := e.Encode(v); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}
		cases := []struct {
			got, want []byte
		}{
			{enc(unitOf[Outputs]{o}), enc(unitOf[map[string]string]{m})},
			{enc(unitOf[Outputs]{}), enc(unitOf[map[string]string]{})},
			{enc(o), enc(m)},
			{enc(Outputs(nil)), enc(map[string]string(nil))},
		}
		for _, c := range cases {
			if !bytes.Equal(c.got, c.want) {
				t.Errorf("escape HTML %v: encoded %s; the map encoded %s", escape, c.got, c.want)
			}
		}
	}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var back Outputs
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for k, v := range m {
		if got, ok := back.Get(k); !ok || got != v {
			t.Errorf("decoded %q: %q, %v; want %q", k, got, ok, v)
		}
	}
	if len(back) != len(m) {
		t.Errorf("decoded %d outputs; want %d", len(back), len(m))
	}
	if o2 := o.With("a1", "new"); o[1].Output != "<&>" || len(o2) != len(o) {
		t.Errorf("With changed the outputs it copied: %v", o)
	}
}
