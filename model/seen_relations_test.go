package model

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestSeenRelationsEncodeAsTheMap: SeenRelations write what the map they
// replace wrote, byte for byte (ids in encoding/json's string order, "10"
// before "2"), and read it back to the same records.
func TestSeenRelationsEncodeAsTheMap(t *testing.T) {
	m := map[int]*SeenRelation{
		2:   {Endpoint: "db", Members: NewMembers([]string{"db/0", "db/1"}), At: 15},
		10:  {Endpoint: "cluster", Members: NewMembers([]string{"web/1"}), App: 20},
		1:   {Endpoint: "log"},
		100: {Endpoint: "x<&>", At: 1},
	}
	want, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSeenRelations(m)
	got, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("SeenRelations encode as\n%s\nthe map as\n%s", got, want)
	}
	var back SeenRelations
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if back.Len() != len(m) {
		t.Fatalf("read back %d relations; want %d", back.Len(), len(m))
	}
	prev := -1
	for id, sr := range back.All() {
		if id <= prev {
			t.Fatalf("relation %d after %d: not in rising order", id, prev)
		}
		prev = id
		if *sr != *m[id] {
			t.Fatalf("relation %d read back as %+v; want %+v", id, *sr, *m[id])
		}
	}
	if back.Get(3) != nil || back.Has(3) || !back.Has(10) {
		t.Fatalf("Get/Has disagree with the records: %v", got)
	}
	// A Seen without relations leaves the field out, as the empty map did.
	b, err := json.Marshal(&Seen{Life: Alive})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("relations")) {
		t.Fatalf("a Seen without relations encodes as %s", b)
	}
}

// TestSeenRelationsSetKeepsOrder: Set inserts in id order and replaces a
// record of the same id.
func TestSeenRelationsSetKeepsOrder(t *testing.T) {
	var s SeenRelations
	for _, id := range []int{5, 1, 9, 3, 5} {
		s.Set(id, SeenRelation{Endpoint: "e", At: uint64(id)})
	}
	var ids []int
	for id := range s.All() {
		ids = append(ids, id)
	}
	if len(ids) != 4 || ids[0] != 1 || ids[1] != 3 || ids[2] != 5 || ids[3] != 9 {
		t.Fatalf("ids %v; want [1 3 5 9]", ids)
	}
}

// FuzzSeenRelationsJSON: whatever decodes as the map decodes as
// SeenRelations, and encodes again as the map of the same records does.
func FuzzSeenRelationsJSON(f *testing.F) {
	f.Add([]byte(`{"1":{"endpoint":"db","units":"db/0-2","at":3,"app":1},"10":{"endpoint":"c","app":0}}`))
	f.Add([]byte(`{"2":null,"-1":{"endpoint":"x","app":0}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m map[int]*SeenRelation
		if json.Unmarshal(data, &m) != nil {
			return
		}
		var s SeenRelations
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatalf("the map read %q and SeenRelations did not: %v", data, err)
		}
		for id, sr := range m {
			if sr == nil {
				delete(m, id)
			}
		}
		if len(m) == 0 {
			// As a field, both are left out when empty (omitzero).
			if !s.IsZero() {
				t.Fatalf("%q: SeenRelations hold %d relations; the map none", data, s.Len())
			}
			return
		}
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%q: SeenRelations encode as %s; the map as %s", data, got, want)
		}
	})
}
