package model

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestRelBagsEncodeAsTheMap: a unit's bags write what the map they
// replace wrote, byte for byte, and read back to the same bags.
func TestRelBagsEncodeAsTheMap(t *testing.T) {
	m := map[int]*Bag{
		2:  NewBag(map[string]string{"host": "10.0.0.1", "<k>": "a&b"}, 7),
		10: NewBag(nil, 3),
		1:  nil,
	}
	want, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(NewRelBags(m))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("RelBags encode as\n%s\nthe map as\n%s", got, want)
	}
	// An encoder that does not escape HTML prints the values as they
	// are, as it printed the map's.
	var plain, plainMap bytes.Buffer
	for buf, v := range map[*bytes.Buffer]any{&plain: NewRelBags(m), &plainMap: m} {
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(plain.Bytes(), plainMap.Bytes()) || !bytes.Contains(plain.Bytes(), []byte("<k>")) {
		t.Fatalf("without HTML escaping, RelBags encode as\n%s\nthe map as\n%s", plain.Bytes(), plainMap.Bytes())
	}
	var back RelBags
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(back)
	if err != nil || !bytes.Equal(again, want) {
		t.Fatalf("read back and written again: %s, %v; want %s", again, err, want)
	}
	if v, _ := back.Get(2).Get("host"); v != "10.0.0.1" || back.Get(1) != nil || back.Get(5) != nil || back.Len() != 3 {
		t.Fatalf("Get disagrees with the bags: %s", again)
	}
	// A unit without bags leaves the field out, as the empty map did.
	b, err := json.Marshal(&Unit{Name: "db/0"})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(`"settings"`)) {
		t.Fatalf("a unit without bags encodes as %s", b)
	}
}

// TestRelBagsWithAndWithoutLeaveTheOriginal: With and Without return new
// bags in id order and never change the ones they are called on, which a
// snapshot's copy of the state shares.
func TestRelBagsWithAndWithoutLeaveTheOriginal(t *testing.T) {
	a, b := NewBag(map[string]string{"k": "a"}, 1), NewBag(map[string]string{"k": "b"}, 2)
	var r RelBags
	r1 := r.With(5, a)
	r2 := r1.With(1, b)
	r3 := r2.With(5, b)
	r4 := r3.Without(1)
	if r.Len() != 0 || r1.Len() != 1 || r1.Get(5) != a || r2.Get(5) != a || r3.Get(5) != b || r4.Len() != 1 || r3.Get(1) != b {
		t.Fatalf("r %d, r1 %v, r2 %v/%v, r3 %v, r4 %d", r.Len(), r1.Get(5), r2.Get(1), r2.Get(5), r3.Get(5), r4.Len())
	}
	var ids []int
	for id := range r3.All() {
		ids = append(ids, id)
	}
	if len(ids) != 2 || ids[0] != 1 || ids[1] != 5 {
		t.Fatalf("ids %v; want [1 5]", ids)
	}
	if r4.Without(9).Len() != 1 || r4.Without(5).Len() != 0 || !r4.Without(5).IsZero() {
		t.Fatal("Without of an absent id or the last one")
	}
}
