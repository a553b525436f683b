package unijson

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
)

// AppendString quotes every string as encoding/json does.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c\n\x00\x1f<>&", "\u2028\u2029", "\xff\xfe", "日本\xe6\x97"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: AppendString %s, encoding/json %s", s, got, want)
		}
	})
}

// Members written by Units, each with AppendMember in key order, make
// the bytes encoding/json makes of the Units map, and so do the maps a
// Units leaves to Append: every peer sees every member but itself, with
// settings that need escaping, and a Units that knows only even
// relation places (a nil map is null, left to Append).
func TestUnitsWrittenAsTheMapIs(t *testing.T) {
	const peers = 150 // more members than appendObject sorts on the stack
	bags := map[string]map[string]string{}
	for i := range peers {
		bags[fmt.Sprintf("db/%d", i)] = map[string]string{"private-address": fmt.Sprintf("10.0.0.%d", i), "<k>": "v&\u2028"}
	}
	var wrote, left int
	units := func(b []byte, i int, r *charmapi.Relation) ([]byte, bool) {
		if i%2 == 1 || r.Units == nil {
			left++
			return b, false
		}
		wrote++
		b = append(b, '{')
		for k, name := range slices.Sorted(maps.Keys(r.Units)) {
			if k > 0 {
				b = append(b, ',')
			}
			b = AppendMember(b, name, r.Units[name])
		}
		return append(b, '}'), true
	}
	for i := range peers {
		self := fmt.Sprintf("db/%d", i)
		members := map[string]map[string]string{}
		for name, b := range bags {
			if name != self {
				members[name] = b
			}
		}
		rels := []charmapi.Relation{{Ident: "cluster:7", ID: 7, Role: "peer", Units: members}, {Ident: "db:8", ID: 8, Units: members}, {ID: 9}}
		encodesAsJSON(t, &charmapi.Universe{API: charmapi.API, Unit: self, Config: map[string]any{}, Relations: rels}, units)
	}
	if wrote != peers || left != 2*peers {
		t.Errorf("Units wrote %d relations and left %d; want %d and %d", wrote, left, peers, 2*peers)
	}
}

// Random members, some relations empty or nil, encode as encoding/json
// does without a Units.
func TestMapsEncodedAsJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		units, n := map[string]map[string]string{}, rng.IntN(40)
		if rng.IntN(5) == 0 {
			units, n = nil, 0
		}
		for j := range n {
			name := fmt.Sprintf("web/%d", rng.IntN(60)+j%3)
			units[name] = map[string]string{"private-address": "10.1.0." + name[4:]}
		}
		encodesAsJSON(t, &charmapi.Universe{Unit: fmt.Sprintf("log/%d", i), Relations: []charmapi.Relation{{ID: 3, Units: units}}}, nil)
	}
}

// encodesAsJSON fails t unless Append with units writes u as
// encoding/json does.
func encodesAsJSON(t *testing.T, u *charmapi.Universe, units Units) {
	t.Helper()
	want, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Append(nil, u, units)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s:\nAppend        %s\nencoding/json %s", u.Unit, got, want)
	}
}
