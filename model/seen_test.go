package model

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

func TestMembersRanges(t *testing.T) {
	var peers []string
	for i := 0; i < 50; i++ {
		if i != 3 {
			peers = append(peers, fmt.Sprintf("db/%d", i))
		}
	}
	for _, c := range []struct {
		names []string
		text  string
	}{
		{nil, ""},
		{peers, "db/0-2,4-49"},
		{[]string{"web/10", "db/2", "web/2", "web/3", "web/2"}, "db/2 web/2-3,10"},
		{[]string{"a/0"}, "a/0"},
	} {
		m := NewMembers(c.names)
		if m.String() != c.text {
			t.Errorf("NewMembers(%v) = %q; want %q", c.names, m, c.text)
		}
		want := slices.Clone(c.names)
		slices.SortFunc(want, CompareUnits)
		want = slices.Compact(want)
		if got := slices.Collect(m.All()); !slices.Equal(got, want) {
			t.Errorf("%q.All() = %v; want %v", m, got, want)
		}
		if m.Len() != len(want) {
			t.Errorf("%q.Len() = %d; want %d", m, m.Len(), len(want))
		}
		for _, n := range want {
			if !m.Has(n) {
				t.Errorf("%q.Has(%s) = false", m, n)
			}
		}
		for _, n := range []string{"db/3", "db/50", "web/4", "x/0", "db", "db/03"} {
			if m.Has(n) && !slices.Contains(want, n) {
				t.Errorf("%q.Has(%s) = true", m, n)
			}
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var back Members
		if err := json.Unmarshal(b, &back); err != nil || back != m {
			t.Errorf("round trip of %q: %q, %v", m, back, err)
		}
	}
	// Units that saw the same members share one text.
	if NewMembers(peers) != NewMembers(slices.Clone(peers)) {
		t.Error("equal sets are not one interned value")
	}
}

func TestMembersOddNames(t *testing.T) {
	names := []string{"db/x", "db/01", "db/1", "a b/2"}
	m := NewMembers(names)
	if m.Len() != 4 || !m.Has("db/01") || !m.Has("a b/2") || m.Has("db/2") {
		t.Errorf("odd names: %q (len %d)", m, m.Len())
	}
	b, _ := json.Marshal(m)
	var back Members
	if err := json.Unmarshal(b, &back); err != nil || back != m {
		t.Errorf("round trip of %s: %q, %v", b, back, err)
	}
}

func TestMembersDecodeChecks(t *testing.T) {
	for text, want := range map[string]string{
		`"db/2,0-1"`:   "db/0-2",
		`"web/1 db/0"`: "db/0 web/1",
		`"db/0,0-3"`:   "db/0-3",
	} {
		var m Members
		if err := json.Unmarshal([]byte(text), &m); err != nil || m.String() != want {
			t.Errorf("%s decodes to %q, %v; want %q", text, m, err, want)
		}
	}
	for _, text := range []string{`"db"`, `"db/"`, `"/1"`, `"db/3-1"`, `"db/1-1"`, `"db/01"`, `"db/-1"`, `"db/0-2000000"`, `"db/a"`, `"db/1,,2"`, `7`} {
		var m Members
		if err := json.Unmarshal([]byte(text), &m); err == nil {
			t.Errorf("%s decoded to %q; want an error", text, m)
		}
	}
}

// TestSeenRelationOldForm reads a relation as nodes wrote it before the
// members were compacted: each member's revision.
func TestSeenRelationOldForm(t *testing.T) {
	var sr SeenRelation
	old := `{"endpoint":"db","members":{"db/0":12,"db/1":15,"db/2":0},"app":3}`
	if err := json.Unmarshal([]byte(old), &sr); err != nil {
		t.Fatal(err)
	}
	if sr.Endpoint != "db" || sr.Members.String() != "db/0-2" || sr.At != 15 || sr.App != 3 {
		t.Errorf("old form read as %s", &sr)
	}
	// Every listed revision is at or below the mark; a later write is
	// above it.
	if sr.ChangedSince(12) || sr.ChangedSince(15) || sr.ChangedSince(0) || !sr.ChangedSince(16) {
		t.Errorf("ChangedSince wrong around mark %d", sr.At)
	}
	b, _ := json.Marshal(&sr)
	if string(b) != `{"endpoint":"db","units":"db/0-2","at":15,"app":3}` {
		t.Errorf("written as %s", b)
	}
	var empty SeenRelation
	if err := json.Unmarshal([]byte(`{"endpoint":"db","members":{},"app":0}`), &empty); err != nil || !empty.Members.IsEmpty() {
		t.Errorf("old empty form: %s, %v", &empty, err)
	}
}

// FuzzMembers decodes a Seen's members as a log entry or snapshot would:
// nothing panics, what decodes is canonical (it encodes and decodes to the
// same set), and All, Len and Has agree.
func FuzzMembers(f *testing.F) {
	for _, seed := range []string{`"db/0-2,4-49"`, `"b/1 a/0,2"`, `["x/01","y"]`, `"db/3-1"`, `""`, `"db/0-1048576"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Members
		if json.Unmarshal(data, &m) != nil {
			return
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var back Members
		if err := json.Unmarshal(b, &back); err != nil || back != m {
			t.Fatalf("%s -> %s -> %q, %v", data, b, back, err)
		}
		if m.Len() > 1<<14 {
			return // listing a million names is correct, only slow
		}
		n := 0
		for name := range m.All() {
			if !m.Has(name) {
				t.Fatalf("%q lists %s but does not have it", m, name)
			}
			n++
		}
		if n != m.Len() || n > MaxSeenMembers {
			t.Fatalf("%q: All gives %d, Len %d", m, n, m.Len())
		}
	})
}
