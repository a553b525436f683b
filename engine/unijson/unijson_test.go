package unijson

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
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

// The universes of one state's peers share their members' encodings
// through Members, and each still encodes as encoding/json does: every
// unit sees every member but itself.
func TestMembersSharedAcrossPeers(t *testing.T) {
	const peers = 150 // more members than appendUnits keeps on the stack
	bags := map[string]map[string]string{}
	for i := range peers {
		bags[fmt.Sprintf("db/%d", i)] = map[string]string{"private-address": fmt.Sprintf("10.0.0.%d", i), "<k>": "v&"}
	}
	members := NewMembers()
	for i := range peers {
		self := fmt.Sprintf("db/%d", i)
		units := map[string]map[string]string{}
		for name, b := range bags {
			if name != self {
				units[name] = b
			}
		}
		encodesAsJSON(t, &charmapi.Universe{API: charmapi.API, Unit: self, Config: map[string]any{}, Relations: []charmapi.Relation{
			{Ident: "cluster:7", ID: 7, Role: "peer", Units: units}}}, members)
	}
	if len(members.frags) != peers {
		t.Errorf("Members kept %d encodings for %d distinct members", len(members.frags), peers)
	}
}

// Universes of one state may show different members of one relation (a
// container-scoped relation shows each unit its own principal's): each
// still encodes as encoding/json does whatever the members seen before.
func TestMembersSharedAcrossSubsets(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	members := NewMembers()
	for i := range 200 {
		units := map[string]map[string]string{}
		for j := range rng.IntN(40) {
			name := fmt.Sprintf("web/%d", rng.IntN(60)+j%3)
			units[name] = map[string]string{"private-address": "10.1.0." + name[4:]}
		}
		encodesAsJSON(t, &charmapi.Universe{Unit: fmt.Sprintf("log/%d", i), Relations: []charmapi.Relation{{ID: 3, Units: units}}}, members)
	}
}

// encodesAsJSON fails t unless Append with members writes u as
// encoding/json does.
func encodesAsJSON(t *testing.T, u *charmapi.Universe, members *Members) {
	t.Helper()
	want, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Append(nil, u, members)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s:\nAppend        %s\nencoding/json %s", u.Unit, got, want)
	}
}
