package model

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// mapBag is a bag as a settings map: the JSON shape snapshots and the
// Raft log hold, which a Bag must write and read byte for byte.
type mapBag struct {
	Data map[string]string `json:"data,omitempty"`
	Rev  uint64            `json:"rev"`
}

// holder puts bags where the state has them: in a map of bags and in a
// pointer field, next to other fields.
type holder[B any] struct {
	Name     string       `json:"name"`
	Settings map[int]*B   `json:"settings,omitempty"`
	App      map[string]B `json:"app,omitempty"`
	Leader   *B           `json:"leader_data,omitempty"`
}

// encodings are a value's JSON as json.Marshal writes it, without HTML
// escaping, and indented without it (as the CLI prints).
func encodings(t testing.TB, v any) []string {
	t.Helper()
	plain, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{string(plain)}
	for _, indent := range []string{"", "  "} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", indent)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		out = append(out, buf.String())
	}
	return out
}

// sameAsMap checks that a bag of data at rev is written as the map is,
// alone and held, under every encoder setting, and reads back as the map
// does.
func sameAsMap(t testing.TB, data map[string]string, rev uint64) {
	t.Helper()
	b := NewBag(data, rev)
	old := mapBag{Data: data, Rev: rev}
	want := encodings(t, old)
	got := encodings(t, b)
	if !slices.Equal(got, want) {
		t.Fatalf("bag %q at %d is written\n%q\nthe map is\n%q", data, rev, got, want)
	}
	oldHeld := holder[mapBag]{Name: "<u&1>", Settings: map[int]*mapBag{1: &old, 2: nil}, App: map[string]mapBag{"a": old, "b": {}}, Leader: &old}
	held := holder[Bag]{Name: "<u&1>", Settings: map[int]*Bag{1: b, 2: nil}, App: map[string]Bag{"a": *b, "b": {}}, Leader: b}
	want = encodings(t, oldHeld)
	if got := encodings(t, held); !slices.Equal(got, want) {
		t.Fatalf("bags of %q held are written\n%q\nthe maps are\n%q", data, got, want)
	}
	// What the map wrote reads back as the map reads it.
	var back holder[Bag]
	if err := json.Unmarshal([]byte(want[0]), &back); err != nil {
		t.Fatal(err)
	}
	var oldBack holder[mapBag]
	if err := json.Unmarshal([]byte(want[0]), &oldBack); err != nil {
		t.Fatal(err)
	}
	a, empty := back.App["a"], back.App["b"]
	for _, b := range []*Bag{back.Settings[1], back.Leader, &a} {
		if b.Rev != rev || !b.EqualMap(oldBack.Leader.Data) {
			t.Fatalf("%q at %d reads back as %q at %d; the map as %q", data, rev, b.Map(), b.Rev, oldBack.Leader.Data)
		}
	}
	if back.Settings[2] != nil || empty.Len() != 0 {
		t.Fatalf("%q held reads back as %+v", data, back)
	}
	// Invalid UTF-8 reads back as U+FFFD, so compare with the map read
	// back, not with what was written.
	if again, want := encodings(t, back), encodings(t, oldBack); !slices.Equal(again, want) {
		t.Fatalf("%q read back is written\n%q\nthe map read back\n%q", data, again, want)
	}
}

func TestBagJSONIsTheMapsJSON(t *testing.T) {
	for _, data := range []map[string]string{
		nil,
		{},
		{"": ""},
		{"host": "10.0.0.1", "port": "5432"},
		{"b": "2", "a": "1", "B": "3", "aa": "4", "a\x00": "5", "é": "6", "~": "7"},
		{"<script>": "a & b > c", "&amp;": "<>", "quote\"d": "back\\slash"},
		{"ctl\x01\x1f\x7f": "\b\f\n\r\t", "nul": "\x00"},
		{"bad\xffutf8": "\xc3\x28 \xed\xa0\x80", "\xfe": "x"},
		{"sep\u2028": "para\u2029", "emoji 🎉": "日本語"},
		{"long": strings.Repeat("x", 300), "longer": strings.Repeat("<&>", 5000)},
	} {
		for _, rev := range []uint64{0, 1, 1<<64 - 1} {
			sameAsMap(t, data, rev)
		}
	}
}

func TestBagReadsAsTheMapReads(t *testing.T) {
	for _, in := range []string{
		`{"data":{"a":"1"},"rev":3}`,
		`{"Data":{"a":"1"},"REV":3}`,
		`{"data":{"a":"1"},"data":{"b":"2","a":"3"},"rev":3}`,
		`{"data":null,"rev":3}`,
		`{"data":{},"rev":3}`,
		`{"rev":3,"other":[1,2]}`,
		`{"data":{"a":"\u003c\ud800"},"rev":3}`,
		`{}`,
		`null`,
	} {
		var old mapBag
		oldErr := json.Unmarshal([]byte(in), &old)
		var b Bag
		err := json.Unmarshal([]byte(in), &b)
		if (err == nil) != (oldErr == nil) || !b.EqualMap(old.Data) || b.Rev != old.Rev {
			t.Errorf("%s reads as %q at %d (%v); the map as %q at %d (%v)", in, b.Map(), b.Rev, err, old.Data, old.Rev, oldErr)
		}
	}
	for _, in := range []string{`{"data":{"a":1},"rev":3}`, `{"data":[],"rev":3}`, `{"rev":-1}`, `[]`, `"x"`} {
		var b Bag
		if err := json.Unmarshal([]byte(in), &b); err == nil {
			t.Errorf("%s reads as %q at %d, without an error", in, b.Map(), b.Rev)
		}
	}
	// A bag read into one already made adds to it, as into a map.
	b := NewBag(map[string]string{"a": "1", "b": "2"}, 5)
	if err := json.Unmarshal([]byte(`{"data":{"b":"3"}}`), b); err != nil || !b.EqualMap(map[string]string{"a": "1", "b": "3"}) || b.Rev != 5 {
		t.Errorf("read into a bag: %q at %d, %v", b.Map(), b.Rev, err)
	}
}

func TestBagAPI(t *testing.T) {
	data := map[string]string{"port": "5432", "host": "10.0.0.1", "": "empty key", "z": ""}
	b := NewBag(data, 7)
	data["host"] = "changed after"
	if v, ok := b.Get("host"); !ok || v != "10.0.0.1" {
		t.Errorf("Get(host) = %q, %v: the bag must not keep the map it was made from", v, ok)
	}
	for k, want := range map[string]string{"": "empty key", "z": "", "port": "5432"} {
		if v, ok := b.Get(k); !ok || v != want {
			t.Errorf("Get(%q) = %q, %v; want %q", k, v, ok, want)
		}
	}
	for _, k := range []string{"a", "hosts", "zz", "HOST"} {
		if v, ok := b.Get(k); ok {
			t.Errorf("Get(%q) = %q; the bag has no such key", k, v)
		}
	}
	var keys []string
	for k := range b.All() {
		keys = append(keys, k)
	}
	if want := []string{"", "host", "port", "z"}; !slices.Equal(keys, want) || b.Len() != 4 {
		t.Errorf("All yields %q, Len %d; want %q", keys, b.Len(), want)
	}
	for k := range b.All() {
		if k == "host" {
			break
		}
	}
	m := b.Map()
	m["host"] = "written"
	if v, _ := b.Get("host"); v != "10.0.0.1" {
		t.Errorf("writing Map's map changed the bag: host %q", v)
	}
	if !b.EqualMap(map[string]string{"port": "5432", "host": "10.0.0.1", "": "empty key", "z": ""}) {
		t.Error("the bag does not equal its pairs")
	}
	for _, other := range []map[string]string{nil, {"port": "5432"}, {"port": "5432", "host": "10.0.0.1", "": "empty key", "z": "x"},
		{"port": "5432", "host": "10.0.0.1", "": "empty key", "y": ""}, {"port": "5432", "host": "10.0.0.1", "": "empty key", "z": "", "zz": ""}} {
		if b.EqualMap(other) {
			t.Errorf("the bag equals %q", other)
		}
	}
	for _, empty := range []*Bag{nil, NewBag(nil, 3), NewBag(map[string]string{}, 0), {}} {
		if empty.Len() != 0 || empty.Map() != nil || !empty.EqualMap(nil) || !empty.EqualMap(map[string]string{}) || empty.EqualMap(map[string]string{"": ""}) {
			t.Errorf("an empty bag %+v: Len %d, Map %v", empty, empty.Len(), empty.Map())
		}
		if _, ok := empty.Get(""); ok {
			t.Error("an empty bag has a key")
		}
		for k, v := range empty.All() {
			t.Errorf("an empty bag yields %q=%q", k, v)
		}
	}
}

// TestBagsShareTheirKeys checks what keeps a bag small: bags with the same
// keys hold one copy of them, whatever their values.
func TestBagsShareTheirKeys(t *testing.T) {
	a := NewBag(map[string]string{"host": "10.0.0.1", "port": "5432"}, 1)
	b := NewBag(map[string]string{"port": "6543", "host": strings.Clone("10.0.0.2")}, 2)
	ka, _ := a.packed()
	kb, _ := b.packed()
	if unsafe.StringData(ka) != unsafe.StringData(kb) {
		t.Error("two bags with the same keys hold two copies of them")
	}
	c := NewBag(map[string]string{"host": "10.0.0.1"}, 1)
	if kc, _ := c.packed(); kc == ka {
		t.Error("bags with different keys share them")
	}
}

func TestUpdateBagKeepsAnEqualBag(t *testing.T) {
	b := NewBag(map[string]string{"a": "1"}, 4)
	if updateBag(b, map[string]string{"a": "1"}, 9) != b {
		t.Error("an unchanged write made a new bag")
	}
	if updateBag(NewBag(nil, 4), nil, 9).Rev != 4 || updateBag(NewBag(nil, 4), map[string]string{}, 9).Rev != 4 {
		t.Error("an empty write to an empty bag made a new one")
	}
	if n := updateBag(b, map[string]string{"a": "2"}, 9); n == b || n.Rev != 9 || !n.EqualMap(map[string]string{"a": "2"}) || !b.EqualMap(map[string]string{"a": "1"}) {
		t.Errorf("a changed write: %q at %d, old bag %q", n.Map(), n.Rev, b.Map())
	}
	if n := updateBag(nil, nil, 9); n == nil || n.Rev != 9 || n.Len() != 0 {
		t.Errorf("a first empty write: %+v", n)
	}
}

// FuzzBagJSON checks that a bag of any pairs is written as the settings
// map is, reads back as the map does, and that any bytes read as a bag
// read as they do as the map.
func FuzzBagJSON(f *testing.F) {
	f.Add("host", "10.0.0.1", "port", "5432", uint64(7), []byte(`{"data":{"a":"1"},"rev":3}`))
	f.Add("<k>", "a&b", "", "\u2028", uint64(0), []byte(`{"Data":{"a":"1"},"data":{"b":"2"}}`))
	f.Add("\xff", "\x00\x1f", "\xfe", "\"\\", uint64(1<<64-1), []byte(`{"data":null}`))
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string, rev uint64, raw []byte) {
		data := map[string]string{k1: v1, k2: v2}
		sameAsMap(t, data, rev)
		sameAsMap(t, map[string]string{k1: v1}, rev)
		var old mapBag
		oldErr := json.Unmarshal(raw, &old)
		var b Bag
		err := json.Unmarshal(raw, &b)
		if (err == nil) != (oldErr == nil) {
			t.Fatalf("%q: bag error %v, map error %v", raw, err, oldErr)
		}
		if err == nil && (!b.EqualMap(old.Data) || b.Rev != old.Rev || !maps.Equal(b.Map(), nilIfEmpty(old.Data))) {
			t.Fatalf("%q reads as %q at %d; the map as %q at %d", raw, b.Map(), b.Rev, old.Data, old.Rev)
		}
	})
}
