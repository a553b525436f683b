package model

import (
	"encoding/json"
	"testing"
)

// FuzzCommand decodes a command as the FSM does (a Raft entry or a
// forwarded request) and checks it: nothing panics, and what Validate
// refuses the FSM refuses too, leaving the state as it was.
func FuzzCommand(f *testing.F) {
	for _, seed := range []string{
		`{"op":"register-machine","machine":{"name":"m1","address":"10.0.0.1"}}`,
		`{"op":"register-machine","machine":{"name":"M1","address":"10.0.0.1\n"}}`,
		`{"op":"resolved","request_id":"r1","resolve":{"unit":"web/0"}}`,
		`{"op":"results","results":[{"unit":"web/0","hash":"h","ports":["80/tcp","icmp","0/tcp"],"settings":{"0":{"":"x"}}}]}`,
		`{"op":"deploy","deploy":{"env":{"apiVersion":"fixpoint/v1","name":"x","services":{"a_b":{"charm":"c"}}},"charms":{}}}`,
		`{"op":"liveness","liveness":{"lost":{"m1":true}}}`,
		`{"op":"reset-machine","reset":{"name":"m1","forget":true}}`,
		`{"op":"join-token","join":{"hash":"","expires":-1}}`,
		`{"op":"auth","auth":{"operator":"x","join":"y"}}`,
		`{"op":"nope","deploy":{},"machine":{}}`,
		`{"op":"limits","limits":{"units_per_service":1,"units":0}}`,
		`{"op":"logs","logs":{"lines":[{"time":1,"unit":"web/0","machine":"m1","level":"info","origin":"hook","message":"hi"}]}}`,
		`{"op":"logs","logs":{"lines":[{"time":1,"node":"n 1","level":"loud","origin":"x","seq":3}]}}`,
		`{"op":"deploy","deploy":{"env":{"apiVersion":"fixpoint/v1","name":"x","services":{"a":{"charm":"c","charm_hash":"h","units":1000000000}}},"charms":{"h":{"hash":"h","meta":{"name":"c"}}}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Command
		if json.Unmarshal(data, &c) != nil {
			return
		}
		verr := c.Validate()
		st := NewState()
		st.Machines["m1"] = &Machine{Name: "m1", Address: "10.0.0.1"}
		before, _ := json.Marshal(st)
		_, aerr := st.Apply(1, &c)
		if verr != nil && aerr == nil {
			t.Fatalf("Validate refuses %s (%v) but the FSM applied it", data, verr)
		}
		if aerr != nil {
			st.Index = 0
			if after, _ := json.Marshal(st); string(after) != string(before) {
				t.Fatalf("a refused command changed the state: %s", data)
			}
		}
	})
}

// FuzzLogBatch holds what an agent posts to the debug log's rules: a batch
// Validate accepts is kept in order within the store's caps, every line
// with its own number.
func FuzzLogBatch(f *testing.F) {
	for _, seed := range []string{
		`{"lines":[{"time":1,"unit":"web/0","machine":"m1","level":"info","origin":"hook","message":"hi"}]}`,
		`{"lines":[{"time":5,"machine":"m1","level":"warning","origin":"agent","message":"3 lines dropped"},{"time":6,"node":"n1","level":"error","origin":"node","message":"x"}]}`,
		`{"lines":[{"time":0,"unit":"web","level":"debug","origin":"juju-log","message":"\u0000"}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var b LogBatch
		if json.Unmarshal(data, &b) != nil {
			return
		}
		c := Command{Op: OpLogs, Logs: &b}
		if c.Validate() != nil {
			return
		}
		store := newLogs(4096, 16384)
		store.Add(b.Lines)
		got, last := store.Read(0, nil, nil, 0, false)
		if last != uint64(len(b.Lines)) {
			t.Fatalf("%d lines numbered up to %d", len(b.Lines), last)
		}
		for i := 1; i < len(got); i++ {
			if got[i].Seq <= got[i-1].Seq {
				t.Fatalf("kept out of order: %d after %d", got[i].Seq, got[i-1].Seq)
			}
		}
		if st := store.Stats(); st.Bytes > 16384 || st.Bytes != recount(store) {
			t.Fatalf("%d bytes kept (recounted %d) against a 16384-byte cap", st.Bytes, recount(store))
		}
	})
}

// FuzzName holds the name rule to its promise: whatever it accepts is
// short and made of the characters it names.
func FuzzName(f *testing.F) {
	for _, s := range []string{"web", "web-2", "max_connections", "-x", "a--b", "A", "x\x1b", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, kind := range []NameKind{KindService, KindConfigKey} {
			if CheckName(kind, s) != nil {
				continue
			}
			if len(s) > MaxNameLen {
				t.Fatalf("%q accepted at %d bytes", s, len(s))
			}
			for _, c := range []byte(s) {
				if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' && kind == KindConfigKey) {
					t.Fatalf("%s %q accepted with %q", kind, s, c)
				}
			}
		}
	})
}
